"""The check language: comparison by meaning, state checks, answer checks, combinators, and how a
run of each kind of task is judged."""

from __future__ import annotations

from typing import Any

import pytest

from ufo_mobile.eval.checks import CheckError, RunFacts, Verdict, evaluate, parse_check
from ufo_mobile.eval.match import holds_words, matches, same, words

SHOP = "com.example.shop"
STATE: dict[str, dict[str, Any]] = {
    SHOP: {"cart": [{"name": "Oat milk", "price": "$2.49", "qty": "3"}, {"name": "Bananas", "qty": 1}],
           "orders": [], "query": "", "address": "12 Harbour Street", "flag": True},
    "com.android.settings": {"wifi": False, "connected": "HomeNet", "brightness": 40},
}


def facts(status: str = "FINISH", answer: str = "", reason: str = "") -> RunFacts:
    return RunFacts(status=status, answer=answer, reason=reason, state=lambda package: STATE[package])


def check(data: Any, **run: str) -> Verdict:
    return evaluate(parse_check(data), facts(**run), SHOP)


@pytest.mark.parametrize(("value", "expected"), [
    (2, "2"), ("02", 2), ("2.0", 2), ("Oat  Milk ", "oat milk"), (True, "true"), ("false", False), (None, ""),
    ("", None),
])
def test_values_compare_by_meaning(value: Any, expected: Any) -> None:
    assert same(value, expected)


@pytest.mark.parametrize(("value", "expected"), [
    (1, True), (0, False), ("2", "3"), ("Oat milk", "Oat"), ({"a": 1}, "a"), ("x", None), ([], ""),
])
def test_values_that_differ(value: Any, expected: Any) -> None:
    assert not same(value, expected)


def test_words_fold_case_punctuation_and_leading_zeros() -> None:
    assert words("Call +1 555-0101, at 07:30!") == ["call", "1", "555", "101", "at", "7", "30"]
    assert holds_words("Her number is +1 555-0101.", "+1 555-0101")
    assert holds_words("at 7:30", "07:30")
    assert not holds_words("13 items", "3")
    assert not holds_words("milk and eggs", "eggs and milk")
    assert holds_words("reach me at a@b", "@")  # no words: plain text containment


def test_patterns_are_partial_mappings_lists_words_and_one_of() -> None:
    item = {"name": "Oat milk", "qty": "3", "tags": ["vegan", "cold"]}
    assert matches(item, {"name": "oat milk", "qty": 3})
    assert not matches(item, {"name": "Oat milk", "size": 1})
    assert matches(item, {"tags": ["Vegan", "cold"]}) and not matches(item, {"tags": ["vegan"]})
    assert matches(item, {"name": {"words": "milk"}})
    assert matches(item, {"qty": {"one_of": [2, 3]}}) and not matches(item, {"qty": {"one_of": [1, 2]}})


def test_equals_in_and_paths() -> None:
    assert check({"path": "address", "equals": "12 harbour street"}).passed
    assert check({"app": "com.android.settings", "path": "wifi", "equals": False}).passed
    assert check({"path": "cart.0.qty", "equals": 3}) == Verdict(True, 'com.example.shop cart.0.qty is "3"')
    assert check({"path": "cart.-1.name", "in": ["Eggs", "Bananas"]}).passed
    verdict = check({"app": "com.android.settings", "path": "connected", "in": ["Office-5G"]})
    assert verdict == Verdict(False, 'com.android.settings connected is "HomeNet", not one of ["Office-5G"]')
    assert check({"path": "cart.5.name", "equals": "x"}).why == "com.example.shop cart.5.name does not exist"
    assert check({"path": "nothing", "equals": None}).why == "com.example.shop nothing does not exist"


def test_contains_on_lists_and_text() -> None:
    assert check({"path": "cart", "contains": {"name": "Oat milk", "qty": 3}}).passed
    verdict = check({"path": "cart", "contains": {"name": "Eggs"}})
    assert not verdict.passed and verdict.why.startswith('com.example.shop cart has no item matching {"name": "Eggs"}')
    assert check({"path": "address", "contains": "harbour"}).passed
    assert not check({"path": "address", "contains": "Harbour Road"}).passed
    assert not check({"path": "cart.0", "contains": "milk"}).passed  # a mapping: no containment


def test_count_with_and_without_where() -> None:
    assert check({"path": "cart", "count": 2}) == Verdict(True, "com.example.shop cart has 2 items")
    assert check({"path": "cart", "count": 1, "where": {"name": "Bananas"}}).passed
    assert check({"path": "orders", "count": 1}) == Verdict(False, "com.example.shop orders has 0 items, not 1")
    assert not check({"path": "address", "count": 1}).passed


def test_combinators() -> None:
    yes, no = {"path": "flag", "equals": True}, {"path": "flag", "equals": False}
    assert check({"all": [yes, yes]}).passed and not check({"all": [yes, no]}).passed
    assert check({"any": [no, yes]}).passed and not check({"any": [no, no]}).passed
    assert check({"not": no}).passed
    assert check({"not": yes}) == Verdict(False, "com.example.shop flag is true (as it must not)")
    assert check({"all": [yes, no]}).why == "com.example.shop flag is true, not false"


def test_answer_checks_need_a_finished_run() -> None:
    assert check({"answer": "$2.49"}, answer="Oat milk costs $2.49.").passed
    assert check({"answer": ["January 17", "10:30"]}, answer="It is on January 17 at 10:30").passed
    assert not check({"answer": ["January 17", "10:30"]}, answer="It is on January 17").passed
    verdict = check({"answer": "HomeNet"}, status="FAIL", reason="giving up")
    assert verdict == Verdict(False, 'the run ended in FAIL ("giving up"), with no answer')
    state_ref = {"answer": {"app": "com.android.settings", "path": "connected"}}
    assert check(state_ref, answer="Connected to HomeNet").passed
    assert not check(state_ref, answer="Connected to Office-5G").passed
    assert check({"answer": 40, "exact": True}, answer="40.").passed
    assert not check({"answer": 40, "exact": True}, answer="It is 40").passed


@pytest.mark.parametrize(("data", "at", "message"), [
    ("wifi", ("check",), "a check is a mapping"),
    ({"path": "wifi"}, ("check",), "exactly one of equals, contains, in, count (got none)"),
    ({"path": "wifi", "equals": 1, "in": [1]}, ("check",), "(got equals, in)"),
    ({"path": "cart", "contains": 1, "where": {}}, ("check",), "where goes with count"),
    ({"path": "cart", "count": -1}, ("check", "count"), ""),  # at "count": the why is pydantic's (not asserted)
    ({"path": "wifi", "equal": True}, ("check", "equal"), "unknown key"),
    ({"all": []}, ("check", "all"), "non-empty list"),
    ({"all": [{"path": "a", "equals": 1}], "path": "b"}, ("check",), "stands alone"),
    ({"not": {"any": [{"answer": "x", "exactly": True}]}}, ("check", "not", "any", "0", "exactly"), "unknown key"),
])
def test_malformed_checks_name_the_key(data: Any, at: tuple[str, ...], message: str) -> None:
    with pytest.raises(CheckError) as info:
        parse_check(data)
    assert info.value.at == at
    assert message in info.value.message and info.value.message.strip()
