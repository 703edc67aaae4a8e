"""CSV that a spreadsheet opens safely and that reads back exactly: one place for every
export that writes CSV (run results, dataset versions) and for the dataset import.

A cell a spreadsheet would run as a formula (starting with = + - @, or a tab or carriage
return that hides one) gets an apostrophe in front, the spreadsheets' own "this is text"
mark. So that the mark can be taken off again, a cell that already starts with an
apostrophe gets one more. `unescape` undoes exactly that: an apostrophe followed by a
formula character or another apostrophe is dropped; any other text is left as it is.
Rows end with CRLF (RFC 4180), so the writer quotes every cell holding a CR or a LF."""

from __future__ import annotations

import csv
from typing import IO, Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
MARK = "'"
_ESCAPED = (*FORMULA_START, MARK)


def escape(value: Any) -> Any:
    """A cell to write: text that would start a formula (or starts with the mark) is marked."""
    if isinstance(value, str) and value.startswith(_ESCAPED):
        return MARK + value
    return value


def unescape(text: str) -> str:
    """The text `escape` was given, for a cell read back."""
    if text.startswith(MARK) and text[1:2] in _ESCAPED:
        return text[1:]
    return text


def writer(buffer: IO[str]) -> Any:
    """A csv writer whose rows end with CRLF: a cell holding CR or LF is always quoted."""
    return csv.writer(buffer, lineterminator="\r\n")
