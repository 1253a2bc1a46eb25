"""Prices: the built-in table, matching by exact name and dated snapshot, user overrides, unknown cost."""

from __future__ import annotations

import re

import pytest

from ufo_mobile.core.llm.prices import Price, PriceTable
from ufo_mobile.settings import PriceSettings


@pytest.fixture(scope="module")
def table() -> PriceTable:
    return PriceTable.builtin()


def test_builtin_table_says_when_it_was_read_and_to_check_it(table: PriceTable) -> None:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", table.read_on)
    assert "check" in table.note.lower()
    for name in ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "o4-mini"):
        assert name in table


@pytest.mark.parametrize(("model", "priced_as"), [
    ("gpt-4o", "gpt-4o"),
    ("gpt-4o-2024-08-06", "gpt-4o"),  # a dated snapshot
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # the longest listed name, not gpt-4o
    ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),  # an exact entry beats the snapshot rule
    ("gpt-4.1-nano-2025-04-14", "gpt-4.1-nano"),
    ("o3-mini", "o3-mini"),
])
def test_lookup(table: PriceTable, model: str, priced_as: str) -> None:
    found = table.lookup(model)
    assert found is not None and found[0] == priced_as


@pytest.mark.parametrize("model", ["gpt-5-pro", "gpt-5.4", "o3-pro-2025-06-10", "llama3.1:8b", "openai/gpt-4o",
                                   "gpt-4o-2024-08-06-extra", ""])
def test_other_names_have_no_price(table: PriceTable, model: str) -> None:
    assert table.lookup(model) is None  # a different model: unknown, never a neighbour's price


def test_cost_counts_cached_tokens_at_their_price() -> None:
    price = Price(input=2.5, cached_input=1.25, output=10.0)
    # 1000 prompt tokens of which 400 cached, 200 completion tokens
    assert price.cost(1000, 400, 200) == pytest.approx((600 * 2.5 + 400 * 1.25 + 200 * 10.0) / 1e6)
    assert price.cost(100, 500, 0) == pytest.approx(100 * 1.25 / 1e6)  # never more cached than prompt


def test_user_prices_override_and_add(table: PriceTable) -> None:
    mine = table.with_overrides({"gpt-4o": PriceSettings(input=1, cached_input=0.5, output=2),
                                 "llama3.1:8b": PriceSettings(input=0, output=0)})
    assert mine.lookup("gpt-4o-2024-08-06") == ("gpt-4o", Price(1.0, 0.5, 2.0))
    assert mine.lookup("llama3.1:8b") == ("llama3.1:8b", Price(0.0, 0.0, 0.0))  # free, not unknown
    assert table.lookup("llama3.1:8b") is None  # the built-in table is unchanged


def test_cached_input_defaults_to_input() -> None:
    assert Price.from_settings(PriceSettings(input=3, output=4)) == Price(3.0, 3.0, 4.0)


def test_price_for_tries_the_reported_model_then_the_configured_name(table: PriceTable) -> None:
    assert table.price_for(["my-azure-deployment", "gpt-4o-mini"]) == table.lookup("gpt-4o-mini")
    assert table.price_for(["gpt-4.1-2025-04-14", "gpt-4o"]) == table.lookup("gpt-4.1")
    assert table.price_for(["my-azure-deployment", "mine"]) is None
