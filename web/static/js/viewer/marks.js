// Interesting points of a replay: where deals begin, where an adapter sees a boundary (a trick
// won, a showdown...), and where a seat earned a strike.

/** The marks of frame ``i`` (none of its boundary ones while frame ``i - 1`` is not here). */
export function marksAt(frames, i, adapter) {
  const marks = [];
  const frame = frames[i];
  if (!frame || i < 1) return marks;
  const before = frames[i - 1]?.public;
  const now = frame.public;
  const event = frame.event;
  if (frames[i - 1] && now?.deal !== undefined && before?.deal !== now.deal) {
    marks.push({ index: i, kind: "deal", label: `deal ${now.deal + 1} begins` });
  } else if (frames[i - 1]) {
    const kind = adapter.boundary?.(before, now, event) ?? null;
    if (kind) marks.push({ index: i, kind, label: adapter.markLabels?.[kind] ?? kind });
  }
  if (event?.status && event.status !== "ok") {
    marks.push({
      index: i,
      kind: "strike",
      label: `seat ${event.seat}: ${event.status.replaceAll("_", " ")}`,
    });
  }
  return marks;
}

/**
 * Marks ``{index, kind, label}`` over ``frames``: the adapter names trick-like boundaries
 * (``boundary``) and may word them (``markLabels``, by kind; else the kind is the label).
 */
export function findMarks(frames, adapter) {
  const marks = [];
  for (let i = 1; i < frames.length; i += 1) marks.push(...marksAt(frames, i, adapter));
  return marks;
}

/** The step to jump to from ``step`` towards ``direction`` (+1 or -1) over deal/trick marks. */
export function jumpTarget(marks, step, direction, last) {
  const stops = [0, ...marks.filter((m) => m.kind !== "strike").map((m) => m.index), last];
  if (direction > 0) return stops.find((i) => i > step) ?? last;
  return [...stops].reverse().find((i) => i < step) ?? 0;
}
