"""Which actions need a person's approval before they run (``human.confirm`` in the task file)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ufo_mobile.llm.reply import ActionCall


@dataclass(frozen=True)
class ConfirmPolicy:
    """Which actions need a person's approval (``human.confirm`` in the task file)."""

    tools: frozenset[str] = frozenset()
    apps: frozenset[str] = frozenset()
    when_model_asks: bool = True

    @classmethod
    def of(cls, tools: Iterable[str], apps: Iterable[str], when_model_asks: bool) -> ConfirmPolicy:
        return cls(frozenset(tools), frozenset(apps), when_model_asks)

    def why(self, action: ActionCall, app: str) -> str | None:
        """The reason ``action`` in ``app`` needs approval, or None when it may just run."""
        if action.name in self.tools:
            return f"the task file marks {action.name} as sensitive"
        if app in self.apps:
            return f"the task file marks every action in {app} as sensitive"
        if action.confirm and self.when_model_asks:
            return "the model asked for approval"
        return None
