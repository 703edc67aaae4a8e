"""The final report as a PDF laid out for reading (fpdf2): page 1 is the summary (objective,
key figures, stop reason) with the trend chart (report_chart.py); page 2 the iterations,
the criteria per iteration and the cost by phase; then the best prompt and its diff from
the seed prompt, added and removed lines marked. Every page carries its number.

Text wraps (prose at words, prompts at any character, so a long unbroken line never runs
off the page). The output is a function of the report alone: the PDF's creation date is the
experiment's end (or start), so the same experiment downloads as the same bytes.

Fonts: DejaVu Sans (regular and bold) and DejaVu Sans Mono for prompts, embedded when found
(Debian's fonts-dejavu-core, or ASSAY_PDF_FONT naming the regular face: its -Bold sibling
and a Mono face beside it are used when present); otherwise the built-in Helvetica and
Courier, and a character outside Latin-1 prints as "?" rather than failing the export."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.experiments import report_chart

if TYPE_CHECKING:
    from fpdf import FPDF

FONT_PATHS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
              "/usr/share/fonts/dejavu/DejaVuSans.ttf")
INK, MUTED, RULE, PANEL = (17, 24, 39), (107, 114, 128), (209, 213, 219), (243, 244, 246)
ADDED, REMOVED, HUNK = (220, 252, 231), (254, 226, 226), (229, 231, 235)
WIDTH = 180.0  # A4 less two 15 mm margins
CRITERIA_PER_TABLE = 5
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# the layout's own symbols, spelled out when the Latin-1 fallback font is in use
_LATIN_1 = str.maketrans({"Δ": "delta", "→": "->", "•": "-"})


def usd(micros: int | None) -> str:
    return "-" if micros is None else f"${micros / 1_000_000:,.4f}"


def num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def interval(score: dict[str, Any] | None, signed: bool = False) -> str:
    if not score or score.get("low") is None or score.get("high") is None:
        return ""
    sign = "+" if signed else ""
    return f"[{score['low']:{sign}.3f}, {score['high']:{sign}.3f}]"


def stop_text(e: dict[str, Any]) -> str:
    if e["stop_detail"]:
        return str(e["stop_detail"])
    return str(e["stop_reason"] or e["status"]).replace("_", " ").capitalize()


def prompt_diff(seed: dict[str, Any] | None, best: dict[str, Any] | None
                ) -> list[tuple[str, str]]:
    """(mark, text) lines of the best prompt's changes from the seed: "+" added, "-"
    removed, " " context, "@" where a change starts (system message or template, line)."""
    if not seed or not best:
        return []
    out: list[tuple[str, str]] = []
    for part, old, new in (("System message", seed["system"] or "", best["system"] or ""),
                           ("Prompt", seed["template"] or "", best["template"] or "")):
        for line in list(difflib.unified_diff(old.splitlines(), new.splitlines(), n=2,
                                              lineterm=""))[2:]:
            if line.startswith("@@"):
                start = re.search(r"\+(\d+)", line)
                out.append(("@", f"{part}, from line {start.group(1) if start else '?'}"))
            else:
                out.append((line[:1] or " ", line[1:]))
    return out


def _document_class() -> type[FPDF]:
    from fpdf import FPDF

    class Report(FPDF):
        title_text = ""
        family = "helvetica"

        def header(self) -> None:
            if self.page_no() > 1:
                self.set_font(self.family, "", 7.5)
                self.set_text_color(*MUTED)
                self.set_y(8)
                self.cell(0, 4, self.title_text, align="L")
                self.set_y(16)

        def footer(self) -> None:
            self.set_y(-11)
            self.set_font(self.family, "", 7.5)
            self.set_text_color(*MUTED)
            self.cell(0, 4, f"Page {self.page_no()} of {{nb}}", align="C")

    return Report


class Writer:
    """The document and its fonts, with the report's building blocks."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.doc = _document_class()(format="A4")
        self.doc.set_margins(15, 15, 15)
        self.doc.set_auto_page_break(True, margin=16)
        self.unicode, self.body, self.mono = self._fonts()
        self.doc.family = self.body  # type: ignore[attr-defined]
        e = report["experiment"]
        self.doc.title_text = self.text(  # type: ignore[attr-defined]
            f"Experiment report · {e['name']}")
        when = e.get("finished_at") or e.get("started_at") or datetime(2000, 1, 1)
        self.doc.set_creation_date(when if when.tzinfo else when.replace(tzinfo=UTC))
        self.doc.set_title(self.text(f"Experiment report: {e['name']}"))
        self.doc.set_creator("Assay")

    def _fonts(self) -> tuple[bool, str, str]:
        for path in (os.environ.get("ASSAY_PDF_FONT"), *FONT_PATHS):
            if path and Path(path).is_file():
                regular = Path(path)
                bold = regular.with_name(f"{regular.stem}-Bold{regular.suffix}")
                self.doc.add_font("body", "", str(regular))
                self.doc.add_font("body", "B", str(bold if bold.is_file() else regular))
                mono = regular.with_name(f"{regular.stem}Mono{regular.suffix}")
                self.doc.add_font("mono", "", str(mono if mono.is_file() else regular))
                return True, "body", "mono"
        return False, "helvetica", "courier"

    def text(self, value: str) -> str:
        value = _CONTROL.sub("", value.replace("\t", "    "))
        if self.unicode:
            return value
        return value.translate(_LATIN_1).encode("latin-1", "replace").decode("latin-1")

    def style(self, size: float, bold: bool = False, colour: tuple[int, int, int] = INK,
              mono: bool = False) -> None:
        self.doc.set_font(self.mono if mono else self.body, "B" if bold and not mono else "",
                          size)
        self.doc.set_text_color(*colour)

    def para(self, value: str, size: float = 9.5, colour: tuple[int, int, int] = INK,
             bold: bool = False, after: float = 1.5) -> None:
        from fpdf.enums import XPos, YPos

        self.style(size, bold, colour)
        self.doc.multi_cell(0, size * 0.47, self.text(value), new_x=XPos.LMARGIN,
                            new_y=YPos.NEXT, align="L")
        self.doc.ln(after)

    def heading(self, value: str, size: float = 13) -> None:
        if self.doc.will_page_break(size * 2.2):
            self.doc.add_page()
        self.doc.ln(3)
        self.para(value, size, bold=True, after=0.8)
        self.doc.set_draw_color(*RULE)
        self.doc.set_line_width(0.3)
        y = self.doc.get_y()
        self.doc.line(15, y, 15 + WIDTH, y)
        self.doc.ln(2.5)

    def table(self, head: list[str], rows: list[list[str]], widths: Sequence[float]
              ) -> None:
        from fpdf.drawing_primitives import rgb8
        from fpdf.enums import TableBordersLayout, TableCellFillMode
        from fpdf.fonts import FontFace

        self.style(8)
        self.doc.set_fill_color(249, 250, 251)  # the banded rows' colour
        self.doc.set_draw_color(*RULE)
        self.doc.set_line_width(0.2)
        with self.doc.table(
                col_widths=widths, width=WIDTH, text_align="LEFT", line_height=3.9,
                padding=(1.2, 1.5), borders_layout=TableBordersLayout.HORIZONTAL_LINES,
                cell_fill_color=rgb8(249, 250, 251), cell_fill_mode=TableCellFillMode.ROWS,
                headings_style=FontFace(emphasis="BOLD", fill_color=PANEL, color=INK),
                repeat_headings=1) as table:
            for values in [head, *rows]:
                row = table.row()
                for cell in values:
                    row.cell(self.text(cell))
        self.doc.ln(2)

    def code(self, items: list[tuple[str, str]], marks: bool) -> None:
        """Lines of a prompt (marks False) or of a diff, each wrapped at the box's width;
        a diff line has its mark in a column and its background by kind."""
        from fpdf.enums import WrapMode, XPos, YPos

        size, lh = 8.3, 3.9
        gutter = 5.0 if marks else 2.0
        fills = {"+": ADDED, "-": REMOVED, "@": HUNK, " ": PANEL}
        for mark, line in items:
            self.style(size, mono=mark != "@", colour=MUTED if mark in (" @") and marks
                       else INK)
            body = self.text(line) or " "
            if mark == "@":
                self.style(7.5, colour=MUTED)
            lines = self.doc.multi_cell(WIDTH - gutter - 1, lh, body, dry_run=True,
                                        output="LINES", wrapmode=WrapMode.CHAR, align="L")
            assert isinstance(lines, list)
            height = lh * max(len(lines), 1) + 0.4
            if self.doc.will_page_break(height):
                self.doc.add_page()
            y = self.doc.get_y()
            self.doc.set_fill_color(*fills.get(mark, PANEL))
            self.doc.rect(15, y, WIDTH, height, style="F")
            if marks and mark in "+-":
                self.doc.set_xy(15, y + 0.2)
                self.doc.cell(gutter, lh, mark, align="C")
            self.doc.set_xy(15 + gutter, y + 0.2)
            self.doc.multi_cell(WIDTH - gutter - 1, lh, body, wrapmode=WrapMode.CHAR,
                                new_x=XPos.LMARGIN, new_y=YPos.NEXT, align="L")
            self.doc.set_y(y + height)

    def figures(self, cards: list[tuple[str, str, str]]) -> None:
        """Key figures side by side: label, value (large), detail."""
        gap = 4.0
        w = (WIDTH - gap * (len(cards) - 1)) / len(cards)
        y = self.doc.get_y()
        for n, (label, value, detail) in enumerate(cards):
            x = 15 + n * (w + gap)
            self.doc.set_fill_color(*PANEL)
            self.doc.rect(x, y, w, 25, style="F")
            self.style(7.5, colour=MUTED)
            self.doc.set_xy(x + 2.5, y + 2.2)
            self.doc.cell(w - 5, 4, self.text(label))
            self.style(15, bold=True)
            self.doc.set_xy(x + 2.5, y + 7)
            self.doc.cell(w - 5, 7, self.text(value))
            self.style(7, colour=MUTED)
            self.doc.set_xy(x + 2.5, y + 15)
            self.doc.multi_cell(w - 5, 3.2, self.text(detail), align="L")
        self.doc.set_xy(15, y + 28)


def _summary(w: Writer, report: dict[str, Any]) -> None:
    e, best, cost = report["experiment"], report["best"], report["cost"]
    w.para("EXPERIMENT REPORT", 8, MUTED, bold=True, after=0.5)
    w.para(e["name"], 20, bold=True, after=2)
    w.para(f"Objective: {e['objective'] or '-'}", 10, after=3)
    held = (report["first_vs_last"] or {}).get("holdout")
    fvl = report["first_vs_last"]
    cards = [
        ("Iterations", str(len(report["iterations"])),
         f"{e['refinement_cases']} refinement, {e['holdout_cases']} held-out cases"),
        ("Best composite", num(best["score"]["mean"]) if best else "-",
         f"{interval(best['score'])} on {best['chosen_on'].replace('holdout', 'held-out')} "
         f"cases, iteration {best['iteration']} (v{best['prompt_version']})"
         if best else "no scores yet"),
        ("Held-out Δ", f"{held['mean_difference']:+.3f}"
         if held and held.get("mean_difference") is not None else "-",
         f"{interval({'low': held.get('low'), 'high': held.get('high')}, True)}, iteration "
         f"{fvl['first']} → {fvl['last']}, paired over {held['n']} cases" if held else
         "needs two iterations with held-out cases"),
        ("Total cost", usd(cost["total_micros"]),
         f"{report['tokens']['input']:,} tokens in, {report['tokens']['output']:,} out")]
    w.figures(cards)
    duration = "-" if e["duration_s"] is None else f"{round(e['duration_s'])} s"
    w.para(f"Stop reason: {stop_text(e)}", 9.5, bold=True, after=0.5)
    w.para(f"Status: {e['status']}. Duration: {duration}.", 9, MUTED, after=1)
    w.heading("Composite per iteration")
    y = w.doc.get_y()
    best_no = best["iteration"] if best else None
    report_chart.draw(w.doc, 15, y, WIDTH, 78, report["iterations"], best_no, w.body)
    w.doc.set_xy(15, y + 80)
    w.para("The headline model's composite (the rubric's weighted criteria, 0 to 1). "
           "Held-out cases are never shown to the refiner: they measure whether a change "
           "helps on the task rather than on the cases it was tuned on.", 8, MUTED)
    w.heading("Findings")
    if best:
        flag = " Flagged: likely overfitting." if best["likely_overfitting"] else ""
        w.para(f"Best version: prompt version {best['prompt_version']} (iteration "
               f"{best['iteration']}), {num(best['score']['mean'])} "
               f"{interval(best['score'])} on "
               f"{best['chosen_on'].replace('holdout', 'held-out')} cases.{flag}", 9.5)
    if fvl:
        for label, key in (("All cases", "all"), ("Held-out cases", "holdout")):
            w.para(f"First vs last, {label.lower()}: {_verdict(fvl[key])}", 9.5)
    model = report["recommended_model"]
    if model:
        w.para(f"Recommended model: {model['name']}, {num(model['score']['mean'])} "
               f"{interval(model['score'])}, {usd(model['cost_per_case_micros'])} per case.",
               9.5)


def _verdict(found: dict[str, Any] | None) -> str:
    if not found:
        return "not enough data"
    better = {"B better": "the last is better", "A better": "the first is better"}.get(
        found["verdict"], found["verdict"])
    diff = found.get("mean_difference")
    if diff is None:
        return better
    return (f"{better}, difference {diff:+.3f} {interval(found, True)} over "
            f"{found['n']} cases (paired)")


def _iterations(w: Writer, report: dict[str, Any]) -> None:
    rows = report["iterations"]
    best = (report["best"] or {}).get("iteration")
    w.heading("Iterations")
    if not rows:
        w.para("No iterations ran.", 9.5, MUTED)
        return
    table = []
    for r in rows:
        delta = r.get("holdout_delta")
        note = ("best; " if r["number"] == best else "") + (
            "likely overfitting" if r["likely_overfitting"] else r["status"])
        table.append([str(r["number"]), f"v{r['prompt_version']}",
                      *(f"{num(r[k]['mean'])}\n{interval(r[k])}"
                        for k in ("all", "refinement", "holdout")),
                      f"{delta['mean_difference']:+.3f}\n{interval(delta, True)}"
                      if delta else "-", usd(r["spent_micros"]), note])
    w.table(["#", "Version", "All cases", "Refinement", "Held-out", "Held-out Δ", "Spend",
             "Note"], table, [5, 10, 16, 16, 16, 17, 10, 16])
    w.para("Means with their 95% interval; Held-out Δ: the paired difference from the "
           "previous iteration on held-out cases.", 7.5, MUTED)


def _criteria(w: Writer, report: dict[str, Any]) -> None:
    rows = report["iterations"]
    names = list(dict.fromkeys(n for r in rows for n in r.get("criteria") or {}))
    w.heading("Criteria per iteration")
    if not names:
        w.para("No criterion has scores yet.", 9.5, MUTED)
        return
    for start in range(0, len(names), CRITERIA_PER_TABLE):
        chunk = names[start:start + CRITERIA_PER_TABLE]
        table = []
        for r in rows:
            found = r.get("criteria") or {}
            table.append([str(r["number"]), *(
                f"{num((found.get(n) or {}).get('all'))}  ·  "
                f"{num((found.get(n) or {}).get('holdout'))}" for n in chunk)])
        w.table(["#", *chunk], table, [5] + [19] * len(chunk))
    weak = ", ".join(f"{c['name']} ({num(c['mean'])})" for c in report["weak_criteria"])
    w.para("Each cell: the criterion's mean on all cases · on held-out cases (0 to 1)."
           + (f" Still weakest in the best version: {weak}." if weak else ""), 7.5, MUTED)


PHASES = (("execution", "Execution", (37, 99, 235)), ("judging", "Judging", (16, 185, 129)),
          ("refinement", "Refinement", (234, 88, 12)), ("assist", "AI assist", (139, 92, 246)))


def _cost(w: Writer, report: dict[str, Any]) -> None:
    cost = report["cost"]
    w.heading("Cost by phase")
    total = cost["total_micros"] or 0
    y = w.doc.get_y()
    x = 15.0
    for key, _, colour in PHASES:
        share = cost[f"{key}_micros"] / total if total else 0
        if share > 0:
            w.doc.set_fill_color(*colour)
            w.doc.rect(x, y, WIDTH * share, 5, style="F")
            x += WIDTH * share
    if not total:
        w.doc.set_fill_color(*PANEL)
        w.doc.rect(15, y, WIDTH, 5, style="F")
    w.doc.set_y(y + 7)
    lx = 15.0
    for key, label, colour in PHASES:
        spent = cost[f"{key}_micros"]
        w.doc.set_fill_color(*colour)
        w.doc.rect(lx, w.doc.get_y() + 0.8, 2.5, 2.5, style="F")
        w.style(8)
        w.doc.set_x(lx + 3.5)
        share = f" ({spent / total:.0%})" if total else ""
        w.doc.cell(41, 4, f"{label} {usd(spent)}{share}")
        lx += 45
    w.doc.ln(7)
    table = [[str(r["number"]), *(usd((r.get("phases") or {}).get(f"{k}_micros"))
                                  for k in ("execution", "judging", "refinement")), "-",
              usd(r["spent_micros"])] for r in report["iterations"]]
    table.append(["All", *(usd(cost[f"{k}_micros"]) for k, _, _ in PHASES), usd(total)])
    w.table(["#", "Execution", "Judging", "Refinement", "AI assist", "Total"], table,
            [8, 18, 18, 18, 18, 18])
    w.para("What each phase was charged (the experiment's share of the project's spend "
           "ledger). AI assist is not tied to an iteration; the All row can exceed the "
           "iterations' sum by calls outside them (the pairwise judge, retries).", 7.5, MUTED)


def _prompts(w: Writer, report: dict[str, Any]) -> None:
    best, seed = report["best_prompt"], report.get("seed_prompt")
    w.heading(f"Best prompt (version {best['number']})" if best else "Best prompt")
    if not best:
        w.para("No iteration has scores yet: there is no best prompt.", 9.5, MUTED)
        return
    if best["note"]:
        w.para(best["note"], 8.5, MUTED)
    if best["system"]:
        w.para("System message", 8.5, MUTED, bold=True, after=1)
        w.code([(" ", line) for line in best["system"].splitlines()], marks=False)
        w.doc.ln(2)
        w.para("Template", 8.5, MUTED, bold=True, after=1)
    w.code([(" ", line) for line in best["template"].splitlines()], marks=False)
    w.heading(f"Changes from the seed prompt (version {seed['number']})" if seed
              else "Changes from the seed prompt")
    diff = prompt_diff(seed, best)
    if not seed:
        w.para("The seed prompt is not stored.", 9.5, MUTED)
    elif not diff:
        w.para("None: the best version is the seed prompt's text.", 9.5, MUTED)
    else:
        added = sum(1 for m, _ in diff if m == "+")
        removed = sum(1 for m, _ in diff if m == "-")
        w.para(f"{added} line(s) added (+, green), {removed} removed (-, red); unchanged "
               "lines around each change in grey.", 8, MUTED)
        w.code(diff, marks=True)


def render(report: dict[str, Any]) -> bytes:
    w = Writer(report)
    w.doc.add_page()
    _summary(w, report)
    w.doc.add_page()
    _iterations(w, report)
    _criteria(w, report)
    _cost(w, report)
    w.heading("Next steps")
    for step in report["next_steps"] or ["None."]:
        w.para(f"• {step}" if w.unicode else f"- {step}", 9)
    w.doc.add_page()
    _prompts(w, report)
    return bytes(w.doc.output())
