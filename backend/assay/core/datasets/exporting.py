"""Export of one version as CSV (questions and cases datasets: one column per variable, then
expected, tags, difficulty) or JSONL in the import's {"input", "expected", ...} format.
Either imports back unchanged: CSV with the mapping {variables: {v: v}, expected:
"expected", tags: "tags", difficulty: "difficulty"}, JSONL without a mapping."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from sqlalchemy.orm import Session

from assay.core.datasets import service
from assay.core.datasets.models import Case, Dataset, DatasetVersion
from assay.core.errors import Invalid

CSV_KINDS = ("questions", "cases")


def _jsonl(cases: list[Case]) -> str:
    lines = []
    for case in cases:
        row: dict[str, Any] = service.case_dict(case)
        if row["trace"] is None:
            del row["trace"]
        lines.append(json.dumps(row, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def _expected_text(case: Case) -> str:
    expected = case.expected or {}
    value = expected.get("answer", expected.get("output", ""))
    return value if isinstance(value, str) else json.dumps(value)


def _csv(kind: str, cases: list[Case]) -> str:
    variables: dict[str, None] = {}
    for case in cases:
        variables.update(dict.fromkeys(case.input or {}))
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*variables, "expected", "tags", "difficulty"])
    for case in cases:
        writer.writerow([*(str((case.input or {}).get(v, "")) for v in variables),
                         _expected_text(case), ",".join(case.tags or []),
                         case.difficulty or ""])
    return out.getvalue()


def export(session: Session, dataset: Dataset, version: DatasetVersion,
           format: str) -> dict[str, Any]:
    if format == "csv" and dataset.kind not in CSV_KINDS:
        raise Invalid(f"{dataset.kind} datasets export as JSONL only",
                      {"query": {"format": ["Use jsonl for this kind"]}})
    cases = service.version_cases(session, version.id)
    content = _jsonl(cases) if format == "jsonl" else _csv(dataset.kind, cases)
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in dataset.name)[:60]
    return {"format": format, "filename": f"{safe}-v{version.number}.{format}",
            "version": version.number, "rows": len(cases), "content": content}
