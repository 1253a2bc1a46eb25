"""Parameters and placeholders: seeded draws, each kind of parameter, and ``$`` templates."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ufo_mobile.eval.params import ParamSpec, draw_params
from ufo_mobile.eval.template import TemplateError, render


def specs(**raw: Any) -> dict[str, ParamSpec]:
    return {name: ParamSpec.model_validate(value) for name, value in raw.items()}


def test_the_same_task_and_seed_draw_the_same_values() -> None:
    params = specs(a={"int": [1, 1000]}, b={"choice": ["x", "y", "z"]}, c={"time": ["00:00", "23:55"], "step": 5})
    assert draw_params(params, "task", 7) == draw_params(params, "task", 7)
    assert len({repr(draw_params(params, "task", seed)) for seed in range(20)}) == 20
    assert draw_params(params, "task", 7) != draw_params(params, "other-task", 7)


def test_each_kind() -> None:
    params = specs(
        n={"int": [10, 20], "step": 5},
        t={"time": ["07:00", "07:30"], "step": 30},
        pair={"sample": ["a", "b", "c"], "k": 2},
        who={"choice": [{"name": "Ann", "row": 4}]},
        text={"format": "$who.name x$n"},
        n_text={"format": "$n"},
        row={"sum": ["who.row", "n", 1]},
    )
    for seed in range(10):
        values = draw_params(params, "t", seed)
        assert values["n"] in (10, 15, 20)
        assert values["t"] in ({"text": "07:00", "h": 7, "m": 0, "hh": "07", "mm": "00"},
                               {"text": "07:30", "h": 7, "m": 30, "hh": "07", "mm": "30"})
        assert len(set(values["pair"])) == 2 and set(values["pair"]) <= {"a", "b", "c"}
        assert values["text"] == f"Ann x{values['n']}"
        assert values["n_text"] == str(values["n"])
        assert values["row"] == 4 + values["n"] + 1


@pytest.mark.parametrize(("raw", "message"), [
    ({}, "exactly one of choice, int, time, sample, format, sum (got none)"),
    ({"choice": [1], "int": [1, 2]}, "(got choice, int)"),
    ({"int": [5, 1]}, "low <= high"),
    ({"time": ["7:00", "08:00"]}, "not a 24-hour time"),
    ({"time": ["09:00", "08:00"]}, "from <= to"),
    ({"sample": ["a"], "k": 2}, "only 1 items"),
])
def test_bad_parameter_specs(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ParamSpec.model_validate(raw)


@pytest.mark.parametrize(("raw", "field"), [
    ({"choice": []}, "choice"),  # an empty list
    ({"choice": [1], "steps": 2}, "steps"),  # an unknown key
])
def test_bad_parameter_fields_are_named(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:  # what is wrong with the field: pydantic's words, not asserted
        ParamSpec.model_validate(raw)
    assert [error["loc"] for error in info.value.errors()] == [(field,)]


def test_a_derived_parameter_must_name_an_earlier_one() -> None:
    with pytest.raises(TemplateError) as info:
        draw_params(specs(row={"sum": ["later", 1]}, later={"int": [1, 2]}), "t", 0)
    assert info.value.at == ("params", "row")
    assert "unknown parameter $later" in info.value.message
    with pytest.raises(TemplateError, match="not an integer"):
        draw_params(specs(name={"choice": ["x"]}, row={"sum": ["name"]}), "t", 0)


PARAMS = {"item": "Oat milk", "qty": 3, "who": {"name": "Ann", "tags": ["a", "b"]}, "ok": True}


@pytest.mark.parametrize(("template", "expected"), [
    ("Add $qty $item", "Add 3 Oat milk"),
    ("$qty", 3),
    ("${qty}", 3),
    ("$who", {"name": "Ann", "tags": ["a", "b"]}),
    ("$who.tags.1", "b"),
    ("${who.name}son", "Annson"),
    ("$who.name's list.", "Ann's list."),
    ("costs $2.49 or $$5", "costs $2.49 or $5"),
    ("$$", "$"),
    ("$ok", True),
    ("on: $ok", "on: true"),
])
def test_templates(template: str, expected: Any) -> None:
    assert render(template, PARAMS) == expected


def test_templates_fill_structures_and_name_the_bad_key() -> None:
    assert render({"a": ["$item", {"b": "$qty"}], "c": 1}, PARAMS) == {"a": ["Oat milk", {"b": 3}], "c": 1}
    with pytest.raises(TemplateError) as info:
        render({"a": ["ok", {"b": "x $nope"}]}, PARAMS, ("check",))
    assert info.value.at == ("check", "a", "1", "b")
    assert info.value.message == "unknown parameter $nope (parameters: $item, $qty, $who, $ok)"
    with pytest.raises(TemplateError, match=r"\$who.age: the parameter has no 'age'"):
        render("$who.age", PARAMS)
    with pytest.raises(TemplateError, match=r"has no '5'"):
        render("$who.tags.5", PARAMS)


def test_a_value_is_not_scanned_again() -> None:
    assert render("$item", {"item": "$qty"}) == "$qty"
    assert render("say $item", {"item": "$qty", "qty": 1}) == "say $qty"
