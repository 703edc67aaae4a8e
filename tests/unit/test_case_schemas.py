"""The case input schemas the API document shows (case_schemas.py) give the verdicts of the
checks the server runs (cases.py), on generated inputs. Left to the descriptions: variable
names of a cases input, the number of user turns of a conversation, blank text and the
length limit."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.core.datasets.case_schemas import INPUT_SCHEMAS
from assay.core.datasets.cases import KINDS, case_errors

TEXT = st.one_of(st.sampled_from(["", "a", "a b", "\tb\n"]), st.text(alphabet="ab", max_size=3))
VALUE = st.one_of(TEXT, st.none(), st.integers(), st.lists(TEXT, max_size=1))
MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool"]),
                           "content": st.one_of(TEXT, VALUE)},
                          optional={"name": TEXT}),
    VALUE)
INPUTS = {
    "questions": st.one_of(st.fixed_dictionaries({"question": VALUE}),
                           st.dictionaries(st.sampled_from(["question", "q"]), VALUE)),
    "cases": st.dictionaries(st.sampled_from(["topic", "tone", "_x1"]), VALUE, max_size=3),
    "conversations": st.one_of(
        st.fixed_dictionaries({"messages": st.lists(MESSAGE, max_size=3)}),
        st.dictionaries(st.sampled_from(["messages", "turns"]), VALUE)),
    "traces": st.dictionaries(TEXT, VALUE, max_size=2),
}
EXPECTED = {"conversations": {"turns": []}}  # the turns are checked apart from the input


def server_accepts(kind: str, data: Any) -> bool:
    case = {"input": data, "expected": EXPECTED.get(kind),
            "trace": {"messages": [{"role": "user", "content": "hi"}]} if kind == "traces"
            else None}
    errors = case_errors(kind, case)
    return not any(field.startswith("input") and not all("user turns" in r for r in reasons)
                   for field, reasons in errors.items())


def test_every_dataset_kind_has_an_input_schema() -> None:
    assert set(INPUT_SCHEMAS) == set(KINDS)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(KINDS).flatmap(lambda kind: st.tuples(st.just(kind), INPUTS[kind])))
def test_the_schema_and_the_checks_agree(found: tuple[str, Any]) -> None:
    kind, data = found
    schema = jsonschema_rs.validator_for(INPUT_SCHEMAS[kind])
    assert schema.is_valid(data) == server_accepts(kind, data), (kind, data)


def test_blank_text_is_left_to_the_description() -> None:
    schema = jsonschema_rs.validator_for(INPUT_SCHEMAS["questions"])
    assert schema.is_valid({"question": " "}) and not server_accepts("questions",
                                                                      {"question": " "})
    assert INPUT_SCHEMAS["questions"]["properties"]["question"]["description"].startswith(
        "Not blank")
