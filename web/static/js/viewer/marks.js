// Interesting points of a replay: where deals and tricks begin, and where a seat earned a strike.

const MARK_LABELS = {
  deal: "new deal",
  trick: "trick won",
  "pick-up": "pick-up",
  take: "take",
  showdown: "showdown",
};

/** Marks ``{index, kind, label}`` over ``frames`` (the adapter names trick-like boundaries). */
export function findMarks(frames, adapter) {
  const marks = [];
  for (let i = 1; i < frames.length; i += 1) {
    const before = frames[i - 1].public;
    const now = frames[i].public;
    const event = frames[i].event;
    if (now?.deal !== undefined && before?.deal !== now.deal) {
      marks.push({ index: i, kind: "deal", label: `deal ${now.deal + 1} begins` });
    } else {
      const kind = adapter.boundary?.(before, now, event) ?? null;
      if (kind) marks.push({ index: i, kind, label: MARK_LABELS[kind] ?? kind });
    }
    if (event?.status && event.status !== "ok") {
      marks.push({
        index: i,
        kind: "strike",
        label: `seat ${event.seat}: ${event.status.replaceAll("_", " ")}`,
      });
    }
  }
  return marks;
}

/** The step to jump to from ``step`` towards ``direction`` (+1 or -1) over deal/trick marks. */
export function jumpTarget(marks, step, direction, last) {
  const stops = [0, ...marks.filter((m) => m.kind !== "strike").map((m) => m.index), last];
  if (direction > 0) return stops.find((i) => i > step) ?? last;
  return [...stops].reverse().find((i) => i < step) ?? 0;
}
