// The site's header on a narrow screen: the section links fold into a menu behind one button,
// so that the header takes two rows at most. Without this script every link stays in view.

const bar = document.querySelector("header.top .bar");
const toggle = bar?.querySelector(".menu-toggle");

function setOpen(open) {
  bar.classList.toggle("open", open);
  toggle.setAttribute("aria-expanded", String(open));
}

if (bar && toggle) {
  bar.classList.add("folding");
  toggle.addEventListener("click", () => setOpen(!bar.classList.contains("open")));
  bar.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && bar.classList.contains("open")) {
      setOpen(false);
      toggle.focus();
    }
  });
}
