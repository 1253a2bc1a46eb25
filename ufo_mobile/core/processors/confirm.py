"""Approvals: which actions need a person's approval before they run (``human.confirm``), whether
a person can be asked (``Attendance``), and what happens when nobody can (``human.unattended``).

An action needs approval when the task file names its tool or the app in front, or when the model
marks it ``"confirm": true`` (the prompt's approval rule says when it should). A person who refuses
an action, or a run with nobody to approve it, refuses it for the rest of the run: its signature
(the app, the action, the label of the control it targets and its other arguments; not the control's
number, which changes from screen to screen) is kept in the shared state, and the same action does not
run again in the run, however the model marks it (nobody is asked about it again).

``Gate.verdict`` decides, for the direct and reasoning modes' actions and CodeAct's calls alike:
run, already refused, ask the person, stop the run, or refuse; the texts the model reads for a
refusal are here too, worded for the way that mode gives up (``give_up``).
"""

from __future__ import annotations

import json
from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import Literal

from ufo_mobile.core.llm.prompt import PromptTemplates
from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.core.ui.controls import Control
from ufo_mobile.core.ui.state import UIState

Unattended = Literal["refuse", "stop", "approve"]
Verdict = Literal["run", "refused", "ask", "stop", "refuse"]


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


@dataclass(frozen=True)
class Gate:
    """The approval check every mode's actions pass before they run."""

    policy: ConfirmPolicy | None
    attendance: Attendance

    def verdict(self, action: ActionCall, app: str, sig: str, refused: Container[str]) -> tuple[Verdict, str]:
        """What happens to ``action`` now, and why it needs approval ('' when it does not): ``run``;
        ``refused`` (earlier in this run); ``ask`` (a person is there); with nobody there, as
        ``human.unattended`` says: ``run`` (approved in advance), ``stop`` or ``refuse``."""
        if sig in refused:
            return "refused", ""
        why = self.policy.why(action, app) if self.policy is not None else None
        if why is None:
            return "run", ""
        if self.attendance.present:
            return "ask", why
        unattended: dict[Unattended, Verdict] = {"approve": "run", "stop": "stop", "refuse": "refuse"}
        return unattended[self.attendance.unattended], why


def refused_before(give_up: str) -> str:
    """What the model reads for an action refused earlier in the run."""
    return f"not run: it was refused earlier in this run and stays refused. If the request cannot be done without " \
           f"it, {give_up} and say so"


def nobody_can_approve(why: str, give_up: str) -> str:
    """What the model reads for an action refused because nobody can approve it."""
    return (f"not run: it needs a person's approval ({why}), and nobody can approve during this run; it stays "
            f"refused. If the request cannot be done without it, {give_up} and say so")


def needs_person(action: ActionCall, why: str) -> str:
    """Why the run stops (``human.unattended: stop``)."""
    return f"{action.render()} needs a person's approval ({why}), and nobody can approve during this run"


def target_control(ui: UIState, action: ActionCall) -> Control | None:
    """The control ``action`` acts on: by its number, or the smallest one at its point; None if none."""
    args = action.args
    if isinstance(args.get("index"), int):
        return next((c for c in ui.elements if c.index == args["index"]), None)
    if isinstance(args.get("x"), int) and isinstance(args.get("y"), int):
        found = [c for c in ui.elements if c.bounds.contains_point(int(args["x"]), int(args["y"]))]
        return min(found, key=lambda c: c.bounds.area) if found else None
    return None


def target_label(action: ActionCall, ui: UIState | None) -> str:
    """The label of the control ``action`` acts on (by number or by point), or ''."""
    control = target_control(ui, action) if ui is not None else None
    return (control.label or control.description) if control is not None else ""


def signature(action: ActionCall, ui: UIState | None, app: str) -> str:
    """What identifies an action across screens (module docstring)."""
    rest = {k: v for k, v in action.args.items() if k not in ("index", "x", "y", "text")}
    if action.name in ("type", "type_secret"):
        rest["text"] = action.args.get("text")
    label = target_label(action, ui) or str(action.args.get("text") or "")
    return json.dumps([app, action.name, " ".join(label.split()).casefold(), rest], sort_keys=True, default=str)
