"""What a call cost: a price table per model, built in (``prices.yaml``) and overridable per model.

A model name is matched exactly, then as a dated snapshot of a listed name: the longest listed name
that the model's name extends by ``-YYYY-MM-DD`` or ``-MMDD`` (``gpt-4o-mini-2024-07-18`` is priced
as ``gpt-4o-mini``, never as ``gpt-4o``). Other extensions (``gpt-5-pro``, ``o3-mini``) are different
models with different prices, so they are not guessed: an unknown model's cost is ``None``
(unknown), never 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from pydantic import ValidationError

from ufo_mobile import yamlio
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import PriceSettings

_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})")
_PER_TOKENS = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    cached_input: float
    output: float

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        """``prompt_tokens`` counts the cached ones too, as the API reports it."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        return ((prompt_tokens - cached) * self.input + cached * self.cached_input
                + completion_tokens * self.output) / _PER_TOKENS

    @classmethod
    def from_settings(cls, settings: PriceSettings) -> Price:
        cached = settings.input if settings.cached_input is None else settings.cached_input
        return cls(settings.input, cached, settings.output)


class PriceTable:
    """Prices by model name, with the date they were read (``read_on``) and a note about them."""

    def __init__(self, prices: Mapping[str, Price], *, read_on: str = "", note: str = "") -> None:
        self._prices = dict(prices)
        self.read_on = read_on
        self.note = note

    @classmethod
    def builtin(cls) -> PriceTable:
        """The table shipped as ``ufo_mobile/core/llm/prices.yaml`` (read through ``yamlio``)."""
        name = "ufo_mobile/core/llm/prices.yaml"
        text = resources.files("ufo_mobile.core.llm").joinpath("prices.yaml").read_text(encoding="utf-8")
        data = yamlio.load_text(text, name)
        if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
            raise ConfigError("the price table needs a 'models' mapping", path=name)
        prices = {str(model): _price(entry, name, str(model)) for model, entry in data["models"].items()}
        return cls(prices, read_on=str(data.get("read_on", "")), note=str(data.get("note", "")))

    def with_overrides(self, overrides: Mapping[str, PriceSettings]) -> PriceTable:
        """This table with the user's prices (``model.prices``) replacing or adding models."""
        prices = {**self._prices, **{name: Price.from_settings(p) for name, p in overrides.items()}}
        return PriceTable(prices, read_on=self.read_on, note=self.note)

    def __contains__(self, name: object) -> bool:
        return name in self._prices

    def lookup(self, model: str) -> tuple[str, Price] | None:
        """The listed name ``model`` is priced as, and its price; None when it has none."""
        if model in self._prices:
            return model, self._prices[model]
        best: str | None = None
        for name in self._prices:
            if model.startswith(name) and _SNAPSHOT.fullmatch(model[len(name):]):
                if best is None or len(name) > len(best):
                    best = name
        return None if best is None else (best, self._prices[best])

    def price_for(self, models: Iterable[str]) -> tuple[str, Price] | None:
        """The first of ``models`` that has a price (the model the endpoint reported, then the configured name)."""
        for model in models:
            if model:
                found = self.lookup(model)
                if found is not None:
                    return found
        return None


def _price(entry: Any, source: str, model: str) -> Price:
    if not isinstance(entry, dict):
        raise ConfigError("a price must be a mapping {input, cached_input, output}", path=source, key=model)
    try:
        return Price.from_settings(PriceSettings.model_validate(entry))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join([model, *(str(x) for x in err["loc"])])
        raise ConfigError(f"bad price: {err['msg']}", path=source, key=key) from exc
