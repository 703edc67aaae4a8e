from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from assay.api.credentials.schemas import Validators, not_blank
from assay.api.fields import StrictBoolean, version_field
from assay.api.files import FileField, JsonText
from assay.api.patch import PatchSchema
from assay.core.datasets.cases import DIFFICULTIES, KINDS, MAX_TAG, MAX_TAGS, SPLITS, case_errors
from assay.core.errors import Invalid

NAME: Validators = [validate.Length(min=1, max=100), not_blank]
MAX_CASES = 1000  # per JSON request; larger sets come through import
CASE_DOC = ("Shape per kind: questions {input: {question}}; cases {input: {<variable>: text}, "
            "expected: {output?}}; conversations {input: {messages: [{role, content}]}, "
            "expected: {turns: [ground truth per user turn]}} with 1-10 user turns; traces "
            "{trace: {messages: [{role: system|user|assistant|tool, content, tool_calls?, "
            "tool_call_id?}]}}. Plus tags, difficulty (easy|medium|hard) and metadata.")


class PageQuery(Schema):
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=100_000))
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


class DatasetListArgs(PageQuery):
    q = fields.String(load_default=None, validate=validate.Length(max=100),
                      metadata={"description": "Text in the name or description"})
    kind = fields.String(load_default=None, validate=validate.OneOf(KINDS))
    tag = fields.String(load_default=None, validate=validate.Length(max=MAX_TAG),
                        metadata={"description": "Datasets tagged so, or whose latest "
                                                 "version has a case with this tag"})
    include_archived = fields.Boolean(load_default=False)
    difficulty = fields.String(load_default=None, validate=validate.OneOf(DIFFICULTIES),
                               metadata={"description": "Datasets whose latest version has a "
                                                        "case of this difficulty"})


class VersionArgs(Schema):
    version = fields.Integer(load_default=None, validate=validate.Range(min=1, max=1_000_000),
                             metadata={"description": "A version number; the latest if "
                                                      "omitted"})


class CaseListArgs(PageQuery, VersionArgs):
    q = fields.String(load_default=None, validate=validate.Length(max=100))
    tag = fields.String(load_default=None, validate=validate.Length(max=MAX_TAG))
    difficulty = fields.String(load_default=None, validate=validate.OneOf(DIFFICULTIES))


class DiffArgs(Schema):
    from_ = fields.Integer(load_default=None, data_key="from",
                           validate=validate.Range(min=1, max=1_000_000),
                           metadata={"description": "The version before `to` if omitted"})
    to = fields.Integer(load_default=None, validate=validate.Range(min=1, max=1_000_000),
                        metadata={"description": "The latest version if omitted"})


class DatasetSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    description = fields.String(required=True, allow_none=True)
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    split = fields.String(required=True, allow_none=True, validate=validate.OneOf(SPLITS))
    case_count = fields.Integer(required=True, metadata={"description": "In the latest version"})
    version = fields.Integer(required=True, metadata={"description": "Latest version number"})
    tags = fields.List(fields.String(), required=True,
                       metadata={"description": "The dataset's own tags"})
    origin = fields.Dict(required=True, allow_none=True, metadata={
        "description": "How it was made: {type: generated, job_id, model_id, model_name, "
                       "params, spec, prompt, requested, received, accepted, cost_micros...}, "
                       "{type: manual} (created by hand; cases may have been imported since), "
                       "or null (made before Assay recorded this)"})
    archived_at = fields.DateTime(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)
    row_version = version_field()


def _tags(**kwargs: object) -> fields.List:
    return fields.List(fields.String(validate=validate.Length(min=1, max=MAX_TAG)),
                       validate=validate.Length(max=MAX_TAGS), **kwargs)  # type: ignore[arg-type]


class DatasetUpdateSchema(PatchSchema):
    name = fields.String(validate=NAME)
    description = fields.String(allow_none=True, validate=validate.Length(max=2000))
    split = fields.String(allow_none=True, validate=validate.OneOf(SPLITS))
    tags = _tags(metadata={"description": "The dataset's tags, all of them (replaces)"})


class TagCountSchema(Schema):
    tag = fields.String(required=True)
    count = fields.Integer(required=True, metadata={"description": "Datasets with this tag"})


class TagListSchema(Schema):
    items = fields.List(fields.Nested(TagCountSchema), required=True)


class TagRenameSchema(Schema):
    from_ = fields.String(required=True, data_key="from",
                          validate=validate.Length(min=1, max=MAX_TAG))
    to = fields.String(required=True, validate=[validate.Length(min=1, max=MAX_TAG),
                                                not_blank])


class TagRemoveSchema(Schema):
    tag = fields.String(required=True, validate=validate.Length(min=1, max=MAX_TAG))


class TagChangeSchema(Schema):
    datasets = fields.Integer(required=True, metadata={"description": "Datasets changed"})


class CaseSchema(Schema):
    id = fields.Integer(required=True)
    position = fields.Integer(required=True, metadata={
        "description": "Stable across versions: an edited case keeps its position"})
    input = fields.Dict(required=True)
    expected = fields.Dict(required=True, allow_none=True)
    trace = fields.Dict(required=True, allow_none=True)
    tags = fields.List(fields.String(), required=True)
    difficulty = fields.String(required=True, allow_none=True,
                               validate=validate.OneOf(DIFFICULTIES))
    metadata = fields.Dict(required=True)
    created_at = fields.DateTime(required=True)


class NewCaseSchema(Schema):
    """One case to add (CaseWrite without its version note). """ + CASE_DOC

    input = fields.Dict(load_default=dict)
    expected = fields.Dict(load_default=None, allow_none=True)
    trace = fields.Dict(load_default=None, allow_none=True)
    tags = _tags(load_default=list)
    difficulty = fields.String(load_default=None, allow_none=True,
                               validate=validate.OneOf(DIFFICULTIES))
    metadata = fields.Dict(load_default=dict)


class CaseWriteSchema(NewCaseSchema):
    """One case. """ + CASE_DOC

    note = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=500),
                         metadata={"description": "A note on the new version"})


class CaseEditSchema(PatchSchema):
    """Only the fields given change; the edit makes a new version and a new case row."""

    input = fields.Dict()
    expected = fields.Dict(allow_none=True)
    trace = fields.Dict(allow_none=True)
    tags = _tags()
    difficulty = fields.String(allow_none=True, validate=validate.OneOf(DIFFICULTIES))
    metadata = fields.Dict()
    note = fields.String(allow_none=True, validate=validate.Length(max=500))


class CaseRows(fields.List):
    """A list of NewCase objects, as the document says, each loaded and checked by
    `load_cases` once the dataset (and so its kind) is known: parsing the body only makes
    sure each row is an object. Were the rows loaded here, a row with a bad field would
    answer 422 before the view could check the other rows against the kind; this way one
    422 names every bad row and field."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(fields.Nested(NewCaseSchema), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any,
                     **kwargs: Any) -> list[Any]:
        if not isinstance(value, list):
            raise ValidationError(self.error_messages["invalid"])
        errors = {index: ["Invalid input type."] for index, row in enumerate(value)
                  if not isinstance(row, dict)}
        if errors:
            raise ValidationError(errors)  # by row, as a List's errors are
        return list(value)


def load_cases(kind: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row loaded by NewCaseSchema (its defaults filled in) and valid for a dataset of
    `kind`, or one 422 naming each bad row (by index) and field. The kind's reasons come
    first; the schema adds what they do not cover (unknown fields, wrong types)."""
    schema = NewCaseSchema()
    loaded: list[dict[str, Any]] = []
    errors: dict[str, Any] = {}
    for index, row in enumerate(rows):
        found: dict[str, Any] = dict(case_errors(kind, row))
        try:
            loaded.append(schema.load(row))
        except ValidationError as error:
            for name, messages in error.normalized_messages().items():
                found.setdefault(name, messages)
        if found:
            errors[str(index)] = found
    if errors:
        raise Invalid("Some cases are not valid", {"json": {"cases": errors}})
    return loaded


class DatasetCreateSchema(Schema):
    name = fields.String(required=True, validate=NAME)
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    description = fields.String(load_default=None, allow_none=True,
                                validate=validate.Length(max=2000))
    split = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(SPLITS))
    tags = _tags(load_default=list)
    cases = CaseRows(load_default=list, validate=validate.Length(max=MAX_CASES),
                     metadata={"description": "Initial cases (checked as the bulk add's are). "
                               + CASE_DOC})


class CaseBulkSchema(Schema):
    """Several cases added at once, in one new version; all valid or none written. """ \
        + CASE_DOC

    cases = CaseRows(required=True, validate=validate.Length(min=1, max=MAX_CASES))
    note = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=500),
                         metadata={"description": "A note on the new version"})


class VersionSchema(Schema):
    id = fields.Integer(required=True, metadata={"description": "What a run names as "
                                                               "dataset_version_id"})
    number = fields.Integer(required=True)
    note = fields.String(required=True, allow_none=True)
    case_count = fields.Integer(required=True)
    created_at = fields.DateTime(required=True)
    created_by = fields.Integer(required=True, allow_none=True)


class CaseChangeSchema(Schema):
    version = fields.Nested(VersionSchema, required=True)
    case = fields.Nested(CaseSchema, required=True, allow_none=True)


class CasesAddedSchema(Schema):
    version = fields.Nested(VersionSchema, required=True)
    cases = fields.List(fields.Nested(CaseSchema), required=True)


class ChangedSchema(Schema):
    before = fields.Nested(CaseSchema, required=True)
    after = fields.Nested(CaseSchema, required=True)


class DiffSchema(Schema):
    added = fields.List(fields.Nested(CaseSchema), required=True)
    removed = fields.List(fields.Nested(CaseSchema), required=True)
    changed = fields.List(fields.Nested(ChangedSchema), required=True)


class ImportSourceSchema(Schema):
    """The file, as text or as base64 of its bytes (which must be UTF-8; a BOM is fine)."""

    format = fields.String(required=True, validate=validate.OneOf(("csv", "jsonl")),
                           metadata={"description": "csv (with a header row) or jsonl"})
    content = fields.String(required=True, validate=validate.Length(max=14_000_000),
                            metadata={"description": "At most 10 MB and 10,000 rows"})
    base64 = StrictBoolean(load_default=False,
                            metadata={"description": "content is base64 of the file's bytes"})


class MappingSchema(Schema):
    variables = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=200)),
                            values=fields.String(validate=validate.Length(min=1, max=64)),
                            required=True, metadata={"description": "column -> variable"})
    expected = fields.String(load_default=None, allow_none=True,
                             validate=validate.Length(min=1, max=200))
    tags = fields.String(load_default=None, allow_none=True,
                         validate=validate.Length(min=1, max=200),
                         metadata={"description": "A column of comma-separated tags"})
    difficulty = fields.String(load_default=None, allow_none=True,
                               validate=validate.Length(min=1, max=200))
    metadata = fields.String(load_default=None, allow_none=True,
                             validate=validate.Length(min=1, max=200),
                             metadata={"description": "A column of JSON objects (empty: {})"})


class ImportSchema(ImportSourceSchema):
    """A file and the mapping of its columns: needed for CSV; JSONL rows without one are
    {input, expected, trace?, tags?, difficulty?, metadata?}."""

    mapping = fields.Nested(MappingSchema)
    note = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=500))


class ImportFileSchema(Schema):
    """The file as a multipart/form-data part (`curl -F file=@cases.csv`)."""

    file = FileField(required=True, metadata={"description": "At most 10 MB of UTF-8 and "
                                                             "10,000 rows"})
    format = fields.String(validate=validate.OneOf(("csv", "jsonl")),
                           metadata={"description": "csv or jsonl; by default from the file "
                                                    "name (.csv, .jsonl or .ndjson)"})


class ImportFormSchema(ImportFileSchema):
    """A file and, for CSV, the mapping of its columns (JSON text in a form field)."""

    mapping = JsonText(MappingSchema)
    note = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=500))


class PreviewSchema(Schema):
    format = fields.String(required=True)
    columns = fields.List(fields.String(), required=True)
    total_rows = fields.Integer(required=True)
    rows = fields.List(fields.Dict(), required=True, metadata={"description": "The first 10"})
    row_numbers = fields.List(fields.Integer(), required=True, metadata={
        "description": "Each previewed row's number as row errors name it: its first line "
                       "in the file (a CSV header is line 1)"})


class ExportArgs(VersionArgs):
    format = fields.String(load_default="jsonl", validate=validate.OneOf(("csv", "jsonl")))


class BucketSchema(Schema):
    key = fields.String(required=True)
    count = fields.Integer(required=True)


class CoverageSchema(Schema):
    version = fields.Integer(required=True)
    case_count = fields.Integer(required=True)
    by_tag = fields.List(fields.Nested(BucketSchema), required=True)
    by_length = fields.List(fields.Nested(BucketSchema), required=True, metadata={
        "description": "Characters of the input text: XS < 50 <= S < 200 <= M < 1000 <= L "
                       "< 5000 <= XL"})
    by_difficulty = fields.List(fields.Nested(BucketSchema), required=True)
    by_language = fields.List(fields.Nested(BucketSchema), required=True, metadata={
        "description": "By script and stop words (a heuristic): ISO codes, 'latin' or "
                       "'unknown'"})
