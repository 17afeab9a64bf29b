// The animated card table: seat panels around an oval, card faces and backs, and zones of cards
// that glide to their new places between frames. Games draw on it through their adapters.

const SUIT_SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const CARD_CLASSES = new Set(["rv-card", "face", "back", "red", "black"]);
const RANK_LABELS = { T: "10", J: "J", Q: "Q", K: "K", A: "A" };

/** What each mark the table draws means, in the order the legend lists them. */
export const MARK_WORDS = {
  "to-move": "the seat to move",
  out: "a seat out of the deal",
  marked: "a card every seat knows this hand holds (picked up or shown)",
  "on-top": "the card on top of the pile",
  winner: "the card that took the trick",
  trumped: "a trump",
  secret: "a secret: a trump or a move only its seat saw",
};

/** The symbol of a suit letter ("H" gives "♥"); unknown letters are returned unchanged. */
export function suitSymbol(suit) {
  return SUIT_SYMBOLS[suit] ?? String(suit ?? "?");
}

/** The English name of a suit letter. */
export function suitName(suit) {
  return SUIT_NAMES[suit] ?? String(suit ?? "?");
}

/** Whether a suit letter is a red suit. */
export function isRedSuit(suit) {
  return suit === "H" || suit === "D";
}

/** A card string ("TH") as a short label ("10♥"). */
export function cardLabel(card) {
  const rank = card.slice(0, -1);
  return `${RANK_LABELS[rank] ?? rank}${suitSymbol(card.slice(-1))}`;
}

/** A span showing a suit symbol, red or black. */
export function suitSpan(suit) {
  const span = el("span", `suit-mark ${isRedSuit(suit) ? "red" : "black"}`, suitSymbol(suit));
  span.title = suitName(suit);
  return span;
}

/** A small element: tag with class names and text. */
export function el(tag, className = "", text = "") {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== "") node.textContent = text;
  return node;
}

/** A new card element: a face for a card string, a back for null. */
export function cardElement(card) {
  if (!card) {
    const back = el("div", "rv-card back");
    back.setAttribute("aria-label", "hidden card");
    return back;
  }
  const suit = card.slice(-1);
  const face = el("div", `rv-card face ${isRedSuit(suit) ? "red" : "black"}`);
  face.dataset.card = card;
  face.setAttribute("aria-label", cardLabel(card));
  // rank over suit, as on a real card: the corner stays one character wide, so it shows whole
  // in the strip a fanned hand leaves of each card (a ten's two digits are set close)
  const rank = card.slice(0, -1);
  const corner = el("span", "corner");
  corner.setAttribute("aria-hidden", "true");
  const rankText = RANK_LABELS[rank] ?? rank;
  corner.append(el("span", `rank${rankText.length > 1 ? " wide" : ""}`, rankText));
  corner.append(el("span", "suit", suitSymbol(suit)));
  const pip = el("span", "pip", suitSymbol(suit));
  pip.setAttribute("aria-hidden", "true");
  face.append(corner, pip);
  return face;
}

/** Where seat ``k`` places after the bottom seat sits, as percentages of the table box. */
export function seatSpot(k, players) {
  const angle = Math.PI / 2 + (k * 2 * Math.PI) / players;
  return { x: 50 + 40 * Math.cos(angle), y: 50 + 38 * Math.sin(angle), angle };
}

function spotClass(spot) {
  if (spot.y > 70) return "at-bottom";
  if (spot.y < 30) return "at-top";
  return spot.x < 50 ? "at-left" : "at-right";
}

function prefersStillness() {
  return window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
}

/** The card table of one match: seat panels, a centre with named zones, and an info box. */
export class Table {
  constructor(container, players, names) {
    this.players = players;
    this.names = names;
    this.cards = new Map();
    this.duration = 260;
    this.root = el("div", "rv-table");
    this.felt = el("div", "felt");
    this.info = el("div", "table-info");
    this.center = el("div", "table-center");
    this.banner = el("div", "table-banner");
    this.banner.hidden = true;
    this.root.append(this.felt, this.info, this.center, this.banner);
    this.seats = names.slice(0, players).map((name, seat) => this.#seatPanel(seat, name));
    this.zones = new Map();
    this.legend = el("ul", "rv-legend");
    this.legend.setAttribute("aria-label", "what the marks mean");
    this.noted = new Set();
    container.append(this.root, this.legend);
    this.layout(0);
  }

  /** Add ``kind`` to the legend the first time a mark of that kind is drawn. */
  note(kind) {
    if (this.noted.has(kind) || !(kind in MARK_WORDS)) return;
    this.noted.add(kind);
    const item = el("li", `legend-${kind}`);
    item.dataset.mark = kind;
    item.append(el("span", `swatch swatch-${kind}`), el("span", "", MARK_WORDS[kind]));
    const order = Object.keys(MARK_WORDS);
    const after = [...this.legend.children].find(
      (other) => order.indexOf(other.dataset.mark) > order.indexOf(kind),
    );
    this.legend.insertBefore(item, after ?? null);
  }

  /** The scrubber's tick kinds, with their words, in the legend (``[[kind, label]]``). */
  noteTicks(kinds) {
    this.legend.querySelectorAll("li.legend-tick").forEach((item) => item.remove());
    for (const [kind, label] of kinds) {
      const item = el("li", "legend-tick");
      item.dataset.mark = `tick-${kind}`;
      const swatch = el("span", `swatch tick ${kind}`);
      item.append(swatch, el("span", "", `${label} (on the slider)`));
      this.legend.append(item);
    }
  }

  #seatPanel(seat, name) {
    const root = el("section", "seat");
    root.dataset.seat = String(seat);
    const head = el("header", "seat-head");
    const label = el("span", "seat-name", name);
    label.title = `seat ${seat}: ${name}`;
    const number = el("span", "seat-number", String(seat));
    const badges = el("span", "badges");
    head.append(number, label, badges);
    const hand = el("div", "hand");
    const note = el("div", "seat-note");
    root.append(head, hand, note);
    this.root.append(root);
    return { root, badges, hand, note };
  }

  /** Place the seats around the table with ``bottom`` nearest the viewer. */
  layout(bottom) {
    this.bottom = bottom;
    this.seats.forEach((panel, seat) => {
      const spot = seatSpot((seat - bottom + this.players) % this.players, this.players);
      panel.spot = spot;
      panel.root.style.left = `${spot.x}%`;
      panel.root.style.top = `${spot.y}%`;
      panel.root.classList.remove("at-bottom", "at-top", "at-left", "at-right");
      panel.root.classList.add(spotClass(spot));
    });
    // a narrow table stacks the seats in rows (viewer.css): one seat at the top takes the row
    this.root.dataset.tops = String(this.seats.filter((p) => spotClass(p.spot) === "at-top").length);
  }

  /** A named zone in the centre of the table (created on first use). */
  zone(name) {
    let zone = this.zones.get(name);
    if (!zone) {
      zone = el("div", `zone zone-${name}`);
      this.center.append(zone);
      this.zones.set(name, zone);
    }
    return zone;
  }

  /** Run ``draw`` (which updates the table) and glide every card from where it was. */
  transition(draw, duration = this.duration) {
    const before = new Map();
    for (const [key, node] of this.cards) {
      if (node.isConnected) before.set(key, node.getBoundingClientRect());
    }
    this.used = new Set();
    draw();
    for (const [key, node] of this.cards) {
      if (!this.used.has(key)) {
        node.remove();
        this.cards.delete(key);
      }
    }
    if (duration > 0 && !prefersStillness()) this.#glide(before, duration);
  }

  #glide(before, duration) {
    for (const key of this.used) {
      const node = this.cards.get(key);
      const old = before.get(key);
      if (!node || typeof node.animate !== "function") continue;
      if (!old) {
        node.animate([{ opacity: 0 }, { opacity: 1 }], { duration, easing: "ease-out" });
        continue;
      }
      const now = node.getBoundingClientRect();
      const dx = old.left - now.left;
      const dy = old.top - now.top;
      if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
      node.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], {
        duration,
        easing: "cubic-bezier(.2,.7,.3,1)",
      });
    }
  }

  /** Show ``items`` (``{key, card, className}``; card null for a back) in ``box``, in order. */
  showCards(box, items) {
    const nodes = items.map((item) => this.#card(item));
    box.replaceChildren(...nodes);
    return nodes;
  }

  #card({ key, card, className = "" }) {
    let node = this.cards.get(key);
    const wanted = card ?? null;
    if (!node || (node.dataset.card ?? null) !== wanted) {
      const fresh = cardElement(wanted);
      node?.replaceWith(fresh);
      node = fresh;
      node.dataset.key = key;
      this.cards.set(key, node);
    }
    node.className = node.className
      .split(" ")
      .filter((c) => CARD_CLASSES.has(c))
      .join(" ");
    node.style.left = "";
    node.style.top = "";
    if (className) {
      const names = className.split(" ").filter(Boolean);
      node.classList.add(...names);
      names.forEach((name) => this.note(name));
    }
    this.used.add(key);
    return node;
  }

  /** A seat's hand: card strings face up, null for a hidden card. */
  setHand(seat, cards, marked = new Set()) {
    const items = cards.map((card, i) => ({
      key: card ?? `back-${seat}-${i}`,
      card,
      className: card && marked.has(card) ? "marked" : "",
    }));
    const panel = this.seats[seat];
    panel.hand.classList.toggle("crowded", cards.length > 9);
    panel.hand.classList.toggle("packed", cards.length > 15);
    this.showCards(panel.hand, items);
  }

  /** Replace a seat's badges by ``[{text, title, className, suit}]``. */
  setBadges(seat, badges) {
    const nodes = badges.map(({ text = "", title = "", className = "", suit = null }) => {
      const badge = el("span", `badge ${className}`.trim(), text);
      if (suit) badge.append(suitSpan(suit));
      if (title) badge.title = title;
      if (className.split(" ").includes("secret")) this.note("secret");
      return badge;
    });
    this.seats[seat].badges.replaceChildren(...nodes);
  }

  /** A short line under a seat's hand (the seat's last action, say). */
  setNote(seat, text) {
    this.seats[seat].note.textContent = text ?? "";
  }

  /** Mark the seat to move and dim the seats listed as out. */
  setTurn(toMove, out = []) {
    if (toMove !== null && toMove !== undefined && this.seats[toMove]) this.note("to-move");
    if (out.length) this.note("out");
    this.seats.forEach((panel, seat) => {
      panel.root.classList.toggle("to-move", seat === toMove);
      panel.root.classList.toggle("out", out.includes(seat));
    });
  }

  /** The info box: a list of ``[label, value]`` rows (value a string or a node). */
  setInfo(rows) {
    const lines = rows.map(([label, value]) => {
      const row = el("div", "info-row");
      row.append(el("span", "info-label", label));
      const cell = el("span", "info-value");
      cell.append(value instanceof Node ? value : document.createTextNode(String(value)));
      row.append(cell);
      return row;
    });
    this.info.replaceChildren(...lines);
  }

  /** A message across the table (the end of a deal or the match), or none. */
  setBanner(text) {
    this.banner.hidden = !text;
    this.banner.textContent = text ?? "";
  }

  /** Trick cards laid towards the seats that played them. */
  showTrick(box, plays, keyPrefix = "") {
    const items = plays.map(({ seat, card, className = "" }) => ({
      key: keyPrefix + card,
      card,
      className,
    }));
    const nodes = this.showCards(box, items);
    nodes.forEach((node, i) => {
      const spot = this.seats[plays[i].seat].spot;
      // close enough to the middle that a card never reaches a seat's cards or note
      node.style.left = `${50 + 26 * Math.cos(spot.angle)}%`;
      node.style.top = `${50 + 26 * Math.sin(spot.angle)}%`;
    });
  }

  /** Remove the table from the page. */
  destroy() {
    this.root.remove();
    this.legend.remove();
    this.cards.clear();
  }
}
