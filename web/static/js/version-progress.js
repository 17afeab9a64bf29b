// The bot page follows its newest version from the queue to the ladders: it asks the API for
// the version's status every few seconds, marks the step it is at, says what happens now and
// next, and reloads the page once the version is active or refused (ratings, logs, matches).

const POLL_MS = 2000;
const SETTLED = new Set(["active", "rejected", "retired"]);

function mark(box, status) {
  const steps = [...box.querySelectorAll(".stages li")];
  const at = steps.findIndex((li) => li.dataset.stage === status);
  steps.forEach((li, i) => {
    li.classList.toggle("done", at >= 0 && i < at);
    li.classList.toggle("now", i === at);
  });
  const current = steps[at];
  if (current) {
    box.querySelector(".progress-note").textContent = current.dataset.note;
    const badge = document.getElementById("bot-state");
    const versionBadge = document.querySelector(`.status[data-version="${box.dataset.version}"]`);
    if (versionBadge) {
      versionBadge.textContent = status;
      versionBadge.className = `status ${status}`;
    }
    if (badge && !badge.classList.contains("active")) {
      badge.textContent = current.dataset.label;
      badge.className = `status ${current.dataset.label}`;
    }
  }
  box.dataset.status = status;
}

async function poll(box) {
  try {
    const response = await fetch(box.dataset.src, { credentials: "same-origin", cache: "no-store" });
    if (response.ok) {
      const status = (await response.json()).data?.status;
      if (status && status !== box.dataset.status) mark(box, status);
      if (SETTLED.has(status)) {
        window.location.reload();
        return;
      }
    }
  } catch {
    // a lost answer (the site restarting, the network): the next poll asks again
  }
  window.setTimeout(() => poll(box), POLL_MS);
}

const box = document.getElementById("version-progress");
if (box) {
  mark(box, box.dataset.status);
  window.setTimeout(() => poll(box), POLL_MS);
}
