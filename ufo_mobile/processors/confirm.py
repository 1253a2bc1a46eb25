"""Approvals: which actions need a person's approval before they run (``human.confirm``), whether
a person can be asked (``Attendance``), and what happens when nobody can (``human.unattended``).

An action needs approval when the task file names its tool or the app in front, or when the model
marks it ``"confirm": true`` (the prompt's approval rule says when it should). A person who refuses
an action, or a run with nobody to approve it, refuses it for the rest of the run: its signature
(the app, the action, the label of the control it targets and its other arguments; not the control's
number, which changes from screen to screen) is kept in the shared state, and the same action needs a
fresh approval to run, however the model marks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ufo_mobile.llm.prompt import PromptTemplates
from ufo_mobile.llm.reply import ActionCall
from ufo_mobile.ui.state import UIState

Unattended = Literal["refuse", "stop", "approve"]


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
            return "you marked it \"confirm\": true"
        return None


@dataclass(frozen=True)
class Attendance:
    """Whether a person can be asked during the run, and, when not, what ``human.unattended`` does
    with an action that needs approval: refuse it, stop the run as needing a person, or approve it."""

    present: bool = False
    unattended: Unattended = "refuse"

    def person_text(self, contract: PromptTemplates) -> str:
        """The contract's line about the person, for this run."""
        if self.present:
            return contract.render("person_present")
        return contract.render(f"person_absent_{self.unattended}")


def target_label(action: ActionCall, ui: UIState | None) -> str:
    """The label of the control ``action`` acts on (by number or by point), or ''."""
    if ui is None:
        return ""
    args = action.args
    try:
        if isinstance(args.get("index"), int):
            control = ui.get_element(int(args["index"]))
        elif isinstance(args.get("x"), int) and isinstance(args.get("y"), int):
            found = [c for c in ui.elements if c.bounds.contains_point(int(args["x"]), int(args["y"]))]
            if not found:
                return ""
            control = min(found, key=lambda c: c.bounds.area)
        else:
            return ""
    except Exception:  # noqa: BLE001 - an unknown number: the action itself will say so
        return ""
    return control.label or control.description


def signature(action: ActionCall, ui: UIState | None, app: str) -> str:
    """What identifies an action across screens (module docstring)."""
    rest = {k: v for k, v in action.args.items() if k not in ("index", "x", "y", "text")}
    if action.name in ("type", "type_secret"):
        rest["text"] = action.args.get("text")
    label = target_label(action, ui) or str(action.args.get("text") or "")
    return json.dumps([app, action.name, " ".join(label.split()).casefold(), rest], sort_keys=True, default=str)
