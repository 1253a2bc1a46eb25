"""Structured final answers: output settings, loading a model or schema, finding and checking JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, RootModel, ValidationError

from ufo_mobile.core.llm.structured import (
    MAX_CANDIDATES,
    OutputSettings,
    OutputSpec,
    StructuredOutputError,
    find_json,
    load_output_spec,
)
from ufo_mobile.errors import ConfigError, LLMOutputParseError

HERE = __name__  # tests.unit.llm.test_structured: the models below are loaded by this dotted path


class Item(BaseModel):
    name: str
    price: float


class Invoice(BaseModel):
    number: str
    total: float
    items: list[Item] = []
    paid: bool = False

    class Line(BaseModel):
        text: str


class Totals(RootModel[list[float]]):
    pass


NOT_A_MODEL = {"type": "object"}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "total": {"type": "number"},
        "currency": {"enum": ["EUR", "USD"]},
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
    },
    "required": ["total"],
    "$defs": {"item": {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}},
}


def model_spec(name: str = "Invoice", sep: str = ":") -> OutputSpec:
    return load_output_spec(OutputSettings(model=f"{HERE}{sep}{name}"))


def schema_spec(schema: dict[str, Any] | None = None) -> OutputSpec:
    return load_output_spec(OutputSettings(schema=SCHEMA if schema is None else schema))


@pytest.mark.parametrize("sep", [":", "."])
def test_a_model_by_dotted_path(sep: str) -> None:
    spec = model_spec(sep=sep)
    assert spec.model is Invoice and spec.source == f"{HERE}{sep}Invoice"
    assert json.loads(spec.schema_text()) == Invoice.model_json_schema()
    assert spec.extract('{"number": "A-1", "total": "12.5"}') == {"number": "A-1", "total": 12.5, "items": [],
                                                                  "paid": False}
    assert model_spec("Invoice.Line", ".").extract('{"text": "x"}') == {"text": "x"}
    assert model_spec("Totals").extract("Totals: [1, 2.5]") == [1.0, 2.5]


@pytest.mark.parametrize(("answer", "where", "end"), [
    ('{"number": "A-1", "total": "abc"}', "total: ", " (got 'abc')"),
    ('{"number": "A-1"}', "total: ", ""),  # a missing field: no input to quote
    ('{"number": "A-1", "total": 1, "items": [{"name": "tea", "price": "x"}, {"name": 3}]}',
     "items[0].price: ", " (got 'x') (and 2 more)"),
    ("[1, 2]", "(top level): ", " (got [1, 2])"),
])
def test_model_answers_that_do_not_match(answer: str, where: str, end: str) -> None:
    with pytest.raises(StructuredOutputError) as info:
        model_spec().extract(answer)
    message = str(info.value)
    # "path: problem (got input) (and N more)": the problem is pydantic's words (not asserted), the rest ours
    assert message.startswith(where) and message.endswith(end) and "\n" not in message
    assert message[len(where):len(message) - len(end)].strip() and ("(got " in message) == bool(end)
    assert info.value.raw == answer and isinstance(info.value, (ValueError, LLMOutputParseError))


def test_more_errors_are_counted() -> None:
    with pytest.raises(StructuredOutputError, match=r"\(and 1 more\)"):
        model_spec().extract("{}")


@pytest.mark.parametrize("answer", [
    '{"total": 3, "items": [{"price": 2}]}',
    '```json\n{"total": 3, "items": [{"price": 2}]}\n```',
    'The invoice [see note 1] totals: {"total": 3, "items": [{"price": 2}]}. {"total": "ignored"}',
    'Using the template "{name}" I found:\n```\n{"total": 3, "items": [{"price": 2}]}\n```\nDone.',
])
def test_schema_answers_bare_fenced_or_in_prose(answer: str) -> None:
    assert schema_spec().extract(answer) == {"total": 3, "items": [{"price": 2}]}


@pytest.mark.parametrize(("answer", "message"), [
    ('{"total": "abc"}', "total: "),  # the failing path (ours), then jsonschema's words (not asserted)
    ('{"items": []}', "(top level): "),
    ('{"total": 1, "items": [{"price": 1}, {"price": "x"}]}', "items[1].price: "),
    ('{"total": 1, "currency": "GBP"}', "currency: "),
    ("The total is 12 euros.", "the answer contains no JSON object"),
    ("", "the answer contains no JSON object"),
    ("{total: 12}", "the answer contains no JSON object"),
])
def test_schema_answers_that_do_not_match(answer: str, message: str) -> None:
    with pytest.raises(StructuredOutputError) as info:
        schema_spec().extract(answer)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert str(info.value).removeprefix(message).strip() and " (and " not in str(info.value)


def test_what_to_look_for_follows_the_schema_type() -> None:
    assert schema_spec({"type": "array", "items": {"type": "integer"}}).extract("Found {x} items: [1, 2]") == [1, 2]
    assert schema_spec({"type": "integer"}).extract("```\n42\n```") == 42
    assert schema_spec({"type": "string", "format": "date"}).extract('"2024-05-01"') == "2024-05-01"
    with pytest.raises(StructuredOutputError, match=r"^\(top level\): \S"):  # the format is checked
        schema_spec({"type": "string", "format": "date"}).extract('"2024-13-45"')
    with pytest.raises(StructuredOutputError, match="no JSON object or array"):
        schema_spec({"type": "integer"}).extract("about forty")


def test_finding_json_is_bounded() -> None:
    assert find_json("[" * 100_000 + '{"a": 1}', "{") == {"a": 1}
    with pytest.raises(StructuredOutputError):
        find_json("[" * 1_000_000)
    with pytest.raises(StructuredOutputError):  # only the first MAX_CANDIDATES openers are tried
        find_json("{x} " * MAX_CANDIDATES + '{"a": 1}')
    assert find_json("{x} " * (MAX_CANDIDATES - 1) + '{"a": 1}') == {"a": 1}
    assert find_json("null") is None


def test_settings_need_exactly_one_of_model_and_schema() -> None:
    for values in ({}, {"model": "a.b:C", "schema": {"type": "object"}}):
        with pytest.raises(ValidationError, match="exactly one of 'model'"):
            OutputSettings.model_validate(values)
    with pytest.raises(ValidationError) as info:
        OutputSettings.model_validate({"model": "a.b:C", "format": "json"})
    assert [error["loc"] for error in info.value.errors()] == [("format",)]  # an unknown key is refused


@pytest.mark.parametrize(("path", "fragment"), [
    ("Invoice", "is not 'package.module:Class' or 'package.module.Class'"),
    ("a.b:", "is not 'package.module:Class'"),
    ("a-b.c:D", "is not 'package.module:Class'"),
    ("a.b:C:D", "is not 'package.module:Class'"),
])
def test_malformed_model_paths(path: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as info:
        OutputSettings(model=path)
    assert fragment in str(info.value) and info.value.errors()[0]["loc"] == ("model",)


@pytest.mark.parametrize(("schema", "fragment"), [
    ({"type": "objekt"}, "not a valid JSON schema: type: "),  # then jsonschema's words (not asserted)
    ({"properties": {"total": {"type": 3}}}, "not a valid JSON schema: properties.total.type: "),
    ({"required": "total"}, "not a valid JSON schema: required: "),
    ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "$ref '#/$defs/missing' cannot be resolved"),
    ({"$ref": "https://example.com/schema.json"}, "$ref 'https://example.com/schema.json' cannot be resolved"),
    ({"$schema": "https://example.com/my-meta"}, "unknown $schema 'https://example.com/my-meta'"),
])
def test_invalid_schemas(schema: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValidationError) as info:
        OutputSettings(schema=schema)
    assert fragment in str(info.value) and info.value.errors()[0]["loc"] == ("schema",)


def test_older_drafts_are_recognised() -> None:
    spec = schema_spec({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                        "definitions": {"n": {"type": "number"}}, "properties": {"n": {"$ref": "#/definitions/n"}}})
    with pytest.raises(StructuredOutputError, match=r"^n: \S"):  # the draft-07 $ref to definitions was followed
        spec.extract('{"n": "x"}')


@pytest.mark.parametrize(("path", "fragment"), [
    ("nosuch_package_xyz.models:Invoice",
     "cannot import nosuch_package_xyz.models: No module named 'nosuch_package_xyz'"),
    ("nosuch_package_xyz.Invoice", "cannot import nosuch_package_xyz: No module named 'nosuch_package_xyz'"),
    (f"{HERE}:Missing", f"{HERE} has no Missing"),
    (f"{HERE}.Missing", f"{HERE} has no Missing"),
    (f"{HERE}:NOT_A_MODEL", "is not a pydantic model (a subclass of pydantic.BaseModel)"),
    (f"{HERE}:model_spec", "is not a pydantic model"),
    ("json:JSONDecoder", "json:JSONDecoder is not a pydantic model"),
    ("pydantic:BaseModel", "pydantic:BaseModel has no JSON schema"),
])
def test_models_that_cannot_be_loaded(path: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_output_spec(OutputSettings(model=path), source="tasks/invoice.yaml")
    message = str(info.value)
    assert message.startswith("tasks/invoice.yaml: task.output.model: ") and fragment in message
    assert "\n" not in message and info.value.key == "task.output.model"


def test_a_module_that_fails_on_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_output_models.py").write_text("import nosuch_dependency_xyz\n")
    (tmp_path / "raising_output_models.py").write_text("raise RuntimeError('bad\\nconfig')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match="cannot import broken_output_models: No module named 'nosuch_dependency"):
        load_output_spec(OutputSettings(model="broken_output_models.Invoice"))
    with pytest.raises(ConfigError, match="cannot import raising_output_models: RuntimeError: bad config$"):
        load_output_spec(OutputSettings(model="raising_output_models:Invoice"))


def test_a_schema_spec_names_the_schema_key_when_settings_were_not_validated() -> None:
    settings = OutputSettings.model_construct(model=None, json_schema={"type": "objekt"})
    with pytest.raises(ConfigError, match="^task.output.schema: not a valid JSON schema"):
        load_output_spec(settings)
    assert schema_spec().schema_text() == json.dumps(SCHEMA, indent=2)
