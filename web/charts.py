"""Charts drawn on the server as inline SVG: no script needed, printable, and testable.

``sparkline`` draws a ladder row's recent trend; ``rating_chart`` the fallback of the bot page's
interactive rating chart. Both return markup safe to put in a template.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape


def _scale(values: Sequence[float], low_px: float, high_px: float) -> list[float]:
    """Map values onto [high_px, low_px] (SVG's y axis grows downwards)."""
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    return [low_px - (v - lo) / span * (low_px - high_px) for v in values]


def _points(values: Sequence[float], width: float, height: float, pad: float) -> str:
    ys = _scale(values, height - pad, pad)
    step = (width - 2 * pad) / max(len(values) - 1, 1)
    return " ".join(f"{pad + i * step:.1f},{y:.1f}" for i, y in enumerate(ys))


def sparkline(values: Sequence[float], width: int = 100, height: int = 24) -> Markup:
    """A small line of ``values`` (oldest first); an empty box when there are fewer than two."""
    title = (
        f"last {len(values)} ratings: {values[0]:.1f} to {values[-1]:.1f}"
        if values
        else "no rated matches yet"
    )
    line = ""
    if len(values) >= 2:
        rising = values[-1] >= values[0]
        line = (
            f'<polyline class="{"up" if rising else "down"}" fill="none" stroke-width="1.5" '
            f'points="{_points(values, width, height, 2)}"/>'
        )
    return Markup(
        f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>{line}</svg>'
    )


def rating_chart(points: Sequence[Sequence[object]], width: int = 640, height: int = 200) -> Markup:
    """The score (``mu - 3 sigma``) and ``mu`` over a bot's rated matches, with the y range.

    ``points`` are ``[iso time, score, mu, sigma, version]`` rows, oldest first; a dashed
    upright line, labelled, marks each point where another version played than before.
    """
    if not points:
        return Markup(
            '<p class="empty">No rating history yet: the bot has not played rated matches.</p>'
        )
    if len(points) == 1:
        return Markup(
            f'<p class="empty">One rated match so far (score {float(points[0][1]):.1f}, '  # type: ignore[arg-type]
            "after it); the chart starts with the second.</p>"
        )
    scores = [float(p[1]) for p in points]  # type: ignore[arg-type]
    mus = [float(p[2]) for p in points]  # type: ignore[arg-type]
    both = scores + mus
    lo, hi = min(both), max(both)
    pad = 24
    scale = [*scores, *mus]
    ys = _scale(scale, height - pad, pad)
    step = (width - 2 * pad) / (len(points) - 1)
    score_line = " ".join(f"{pad + i * step:.1f},{y:.1f}" for i, y in enumerate(ys[: len(scores)]))
    mu_line = " ".join(f"{pad + i * step:.1f},{y:.1f}" for i, y in enumerate(ys[len(scores) :]))
    title = (
        f"rating from {points[0][0]} to {points[-1][0]}: score {scores[0]:.1f} to {scores[-1]:.1f}"
    )
    return Markup(
        f'<svg class="rating-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<text x="2" y="{pad - 6}" class="axis">{hi:.1f}</text>'
        f'<text x="2" y="{height - 4}" class="axis">{lo:.1f}</text>'
        f'<polyline class="mu" fill="none" stroke-dasharray="4 3" points="{mu_line}"/>'
        f'<polyline class="score" fill="none" stroke-width="2" points="{score_line}"/>'
        f"{_version_marks(points, pad, step, height)}</svg>"
    )


def _version_marks(points: Sequence[Sequence[object]], pad: int, step: float, height: int) -> str:
    marks = []
    for i in range(1, len(points)):
        now = points[i][4] if len(points[i]) > 4 else None
        if now is not None and now != points[i - 1][4]:
            x = pad + i * step
            marks.append(
                f'<line class="version-mark" x1="{x:.1f}" x2="{x:.1f}" y1="{pad / 2:.1f}" '
                f'y2="{height - pad / 2:.1f}" stroke-dasharray="4 4"/>'
                f'<text class="version-mark" x="{x + 3:.1f}" y="{pad:.1f}">'
                f"v{escape(str(now))}</text>"
            )
    return "".join(marks)


def rate_bars(rows: Sequence[tuple[str, float | None, int]], width: int = 320) -> Markup:
    """Horizontal bars of a rate (0 to 1) per label: ``(label, rate, matches)`` rows, each bar
    labelled with its percentage and number of matches; an empty note when there is no row."""
    if not rows:
        return Markup('<p class="empty">No counted matches yet.</p>')
    bar_h, gap, label_w = 18, 6, 96
    height = len(rows) * (bar_h + gap)
    room = width - label_w - 84
    parts = []
    for i, (label, rate, matches) in enumerate(rows):
        y = i * (bar_h + gap)
        filled = room * (rate or 0.0)
        shown = "–" if rate is None else f"{rate * 100:.0f}%"
        parts.append(
            f'<text class="axis" x="0" y="{y + 13}">{escape(label)}</text>'
            f'<rect class="track" x="{label_w}" y="{y}" width="{room}" height="{bar_h}"/>'
            f'<rect class="bar" x="{label_w}" y="{y}" width="{filled:.1f}" height="{bar_h}"/>'
            f'<text class="axis" x="{label_w + room + 6}" y="{y + 13}">{shown} of {matches}'
            "</text>"
        )
    title = "; ".join(
        f"{label}: {'no matches' if r is None else f'{r * 100:.0f}%'} of {n}"
        for label, r, n in rows
    )
    return Markup(
        f'<svg class="rate-bars" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>{''.join(parts)}</svg>"
    )


def rate_line(
    points: Sequence[tuple[str, float | None]], width: int = 640, height: int = 160
) -> Markup:
    """A rate (0 to 1) per day, oldest first, on a fixed 0-100% axis with a dot per day."""
    known = [(day, r) for day, r in points if r is not None]
    if len(known) < 2:
        return Markup('<p class="empty">The chart starts with a second day of matches.</p>')
    pad = 24
    step = (width - 2 * pad) / (len(known) - 1)
    xy = [(pad + i * step, height - pad - r * (height - 2 * pad)) for i, (_, r) in enumerate(known)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    dots = "".join(f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="2.5"/>' for x, y in xy)
    title = f"win rate by day from {known[0][0]} to {known[-1][0]}"
    return Markup(
        f'<svg class="rate-line" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<text class="axis" x="2" y="{pad - 6}">100%</text>'
        f'<text class="axis" x="2" y="{height - 4}">0%</text>'
        f'<line class="grid" x1="{pad}" x2="{width - pad}" y1="{height / 2}" y2="{height / 2}"/>'
        f'<text class="axis" x="{pad}" y="{height - 4}" dx="20">{escape(known[0][0])}</text>'
        f'<text class="axis" x="{width - pad}" y="{height - 4}" text-anchor="end">'
        f"{escape(known[-1][0])}</text>"
        f'<polyline class="score" fill="none" stroke-width="2" points="{line}"/>{dots}</svg>'
    )
