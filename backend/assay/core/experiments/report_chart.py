"""The report PDF's trend chart, drawn with fpdf2's own vector primitives: the headline
model's composite per iteration on refinement and on held-out cases, each point with its
95% interval as a bar, the best iteration's column shaded. Refinement and held-out differ
in colour (blue, orange: apart for colour-blind readers too) and in marker (circle,
square), so the chart still reads in greyscale."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fpdf import FPDF

SERIES = (("refinement", "Refinement cases", (37, 99, 235)),
          ("holdout", "Held-out cases", (234, 88, 12)))
GRID, AXIS, MUTED, BEST = (229, 231, 235), (156, 163, 175), (107, 114, 128), (254, 243, 199)
STEPS = (0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25)


def scale(values: list[float]) -> tuple[float, float, float]:
    """(low, high, tick step) of the y axis: the values with a margin, on round ticks,
    within 0..1 (composites are normalised)."""
    low, high = min(values), max(values)
    pad = max(0.02, (high - low) * 0.1)
    low, high = max(0.0, low - pad), min(1.0, high + pad)
    step = next((s for s in STEPS if (high - low) / s <= 6), 0.25)
    low = math.floor(round(low / step, 6)) * step
    high = math.ceil(round(high / step, 6)) * step
    return round(low, 4), round(min(high, 1.0) if high > low else low + step, 4), step


def _points(rows: list[dict[str, Any]], key: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, row[key]) for i, row in enumerate(rows) if row[key]["mean"] is not None]


def draw(doc: FPDF, x: float, y: float, w: float, h: float, rows: list[dict[str, Any]],
         best: int | None, family: str) -> None:
    """The chart in the box (x, y, w, h), in mm; `best`: the best iteration's number."""
    left, right, top, bottom = x + 13, x + w - 3, y + 9, y + h - 12
    values = [v for key, _, _ in SERIES for _, s in _points(rows, key)
              for v in (s["mean"], s["low"], s["high"]) if v is not None]
    doc.set_line_width(0.2)
    doc.set_draw_color(*AXIS)
    doc.rect(x, y, w, h)
    doc.set_font(family, "", 8)
    doc.set_text_color(*MUTED)
    if not values:
        doc.set_xy(x, y + h / 2 - 3)
        doc.cell(w, 6, "No iteration has scores yet.", align="C")
        return
    low, high, step = scale(values)

    def at(value: float) -> float:
        return bottom - (value - low) / (high - low) * (bottom - top)

    slot = (right - left) / max(len(rows), 1)
    centre = [left + slot * (i + 0.5) for i in range(len(rows))]
    for i, row in enumerate(rows):
        if row["number"] == best:
            doc.set_fill_color(*BEST)
            doc.rect(centre[i] - slot / 2, top, slot, bottom - top, style="F")
            doc.set_xy(centre[i] - slot / 2, top + 0.5)
            doc.cell(slot, 3.5, "best", align="C")
    ticks = round((high - low) / step)
    for k in range(ticks + 1):
        value = low + k * step
        doc.set_draw_color(*(AXIS if k == 0 else GRID))
        doc.line(left, at(value), right, at(value))
        doc.set_xy(x + 1, at(value) - 2)
        doc.cell(left - x - 2.5, 4, f"{value:.2f}", align="R")
    for i, row in enumerate(rows):
        doc.set_xy(centre[i] - slot / 2, bottom + 1)
        doc.cell(slot, 4, str(row["number"]), align="C")
    doc.set_xy(left, bottom + 5.5)
    doc.cell(right - left, 4, "Iteration", align="C")
    with doc.rotation(90, x + 3.5, (top + bottom) / 2):
        doc.set_xy(x + 3.5 - 15, (top + bottom) / 2 - 2)
        doc.cell(30, 4, "Composite", align="C")
    offset = min(2.0, slot * 0.15)
    for n, (key, label, colour) in enumerate(SERIES):
        dx = (n - 0.5) * 2 * offset
        points = _points(rows, key)
        doc.set_draw_color(*colour)
        doc.set_fill_color(*colour)
        doc.set_line_width(0.5)
        for (i, a), (j, b) in itertools.pairwise(points):
            if j == i + 1:  # a gap in the scores breaks the line
                doc.line(centre[i] + dx, at(a["mean"]), centre[j] + dx, at(b["mean"]))
        doc.set_line_width(0.3)
        for i, s in points:
            cx = centre[i] + dx
            if s["low"] is not None and s["high"] is not None:
                doc.line(cx, at(s["low"]), cx, at(s["high"]))
                for end in (s["low"], s["high"]):
                    doc.line(cx - 0.8, at(end), cx + 0.8, at(end))
            if n == 0:
                doc.circle(cx, at(s["mean"]), 0.9, style="F")
            else:
                doc.rect(cx - 0.85, at(s["mean"]) - 0.85, 1.7, 1.7, style="F")
        lx = left + 2 + n * 42
        doc.rect(lx, y + 3, 4, 2.2, style="F")
        doc.set_xy(lx + 5, y + 2)
        doc.set_text_color(55, 65, 81)
        doc.cell(36, 4.2, label)
    doc.set_xy(left + 86, y + 2)
    doc.set_text_color(*MUTED)
    doc.cell(right - left - 86, 4.2, "points: mean; bars: 95% interval", align="R")
    doc.set_line_width(0.2)
    doc.set_text_color(0, 0, 0)
