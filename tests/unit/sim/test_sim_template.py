"""The template and condition language used by app files."""

from __future__ import annotations

from ufo_mobile.sim.phone.behaviour import Condition
from ufo_mobile.sim.phone.template import Scope, holds, names, render, resolve


def test_placeholders_and_literal_braces() -> None:
    scope = Scope({"brightness": 40, "name": "Ann"})
    assert render("Brightness {brightness}%", scope) == "Brightness 40%"
    assert render("{{name}} is {name}", scope) == "{name} is Ann"
    assert render("a { b } c", scope) == "a { b } c"


def test_inserted_values_are_not_scanned_again() -> None:
    scope = Scope({"draft": "{draft} $(reboot) {{x}}"})
    assert render("{draft}", scope) == "{draft} $(reboot) {{x}}"
    assert resolve({"text": "{draft}"}, scope) == {"text": "{draft} $(reboot) {{x}}"}


def test_choice_and_item_fields() -> None:
    scope = Scope({"wifi": True}).with_item({"ssid": "HomeNet"}, 3)
    assert render("{wifi?On:Off} {item.ssid} #{@index}", scope) == "On HomeNet #3"
    assert render("{missing?yes:no}", scope) == "no"


def test_single_placeholder_keeps_the_raw_value() -> None:
    scope = Scope({"wifi": False, "notes": [{"title": "a"}]})
    assert resolve("{wifi}", scope) is False
    copied = resolve("{notes}", scope)
    assert copied == [{"title": "a"}] and copied is not scope.state["notes"]


def test_conditions() -> None:
    scope = Scope({"to": "Bob", "draft": "", "wifi": True}).with_item({"name": "Bob Smith"}, 0)
    assert holds(Condition(var="wifi"), scope)
    assert not holds(Condition(var="wifi", negate=True), scope)
    assert holds(Condition(var="item.name", contains="bob"), scope)
    assert holds(Condition(var="draft", not_empty=False), scope)
    assert holds(Condition(var="to", equals="Bob"), scope)
    assert not holds(Condition(var="to", equals="Bob Smith"), scope)


def test_names_lists_variables() -> None:
    assert names("{a} {{b}} {item.c} {d?x:y}") == ["a", "item.c", "d"]
