"""A suite task: its file's schema, its variants (one per seed), and how a run of it is judged.

A task file (``config/suite/<id>.yaml``)::

    id: shop-add-to-cart                 # the file's name without .yaml
    app: com.example.shop                # the app the task is about (the default of checks)
    text: Add $qty packs of $item to my cart in the Shop app
    params:                              # see ufo_mobile.eval.params
      item: {choice: [Oat milk, Spaghetti, Green tea]}
      qty: {int: [2, 4]}
    budget: 10                           # the step budget (limits.max_steps of the run)
    setup:                               # the simulated phone before the run
      install: [com.example.shop]        # shipped apps that are not preinstalled
      start_app: com.example.shop        # optional; otherwise the run starts on the home screen
      state:                             # state variables to set, per app (placeholders allowed)
        com.example.shop: {cart: []}
    expect: finish                       # or fail: the task is impossible as asked (below)
    check: {path: cart, contains: {name: $item, qty: $qty}}   # see ufo_mobile.eval.checks
    oracle: scripts/shop-add-to-cart.yaml   # default: scripts/<id>.yaml next to the task file
    tags: [multi-step]

The kind of a task follows from it: ``expect: fail`` makes it *impossible*, a check with an
``answer`` part makes it *retrieval*, anything else is *feasible*. How each is judged:

- feasible: the check on the phone's state decides, whatever the agent said at the end (as in
  AndroidWorld: a run that did the work but then hit the step limit still did the work);
- retrieval: the answer check needs the run to end in FINISH with the expected words;
- impossible: the agent itself must end the run in FAIL (with a reason; a step limit, an error or
  a signal does not count), and the check, if there is one, must hold (say, that nothing was
  deleted on the way). So giving up at once is right for every impossible task: a suite's score
  should be read with its feasible share beside it.

The oracle script is a scripted-model reply script (``ufo_mobile.core.llm.scripted``) in which every
string may use the task's parameters: it is rendered with the same values as the task text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ufo_mobile.core.llm.scripted import Script
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import ConfigError, first_problem
from ufo_mobile.eval import match
from ufo_mobile.eval.checks import Check, CheckError, RunFacts, Verdict, evaluate, parse_check
from ufo_mobile.eval.doc import Doc
from ufo_mobile.eval.params import ParamSpec, draw_params
from ufo_mobile.eval.template import TemplateError, render

TaskKind = Literal["feasible", "retrieval", "impossible"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Setup(_Strict):
    """A task's ``setup:``: the simulated phone it starts from."""

    install: list[str] = Field(default_factory=list, description="shipped apps to install (by package)")
    start_app: str | None = Field(default=None, description="the app in front at the start; None = home")
    state: dict[str, dict[str, Any]] = Field(default_factory=dict, description="package -> {variable: value}")


class TaskSpec(_Strict):
    """The schema of a task file."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=80)
    app: str = Field(min_length=1)
    text: str = Field(min_length=1)
    params: dict[str, ParamSpec] = Field(default_factory=dict)
    budget: int = Field(gt=0, le=500)
    setup: Setup = Setup()
    expect: Literal["finish", "fail"] = "finish"
    check: Any = None
    oracle: str | None = None
    tags: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class SuiteTask:
    """A loaded task: its spec, its file, and its oracle script (raw, before placeholders)."""

    spec: TaskSpec
    doc: Doc
    oracle_doc: Doc | None = None

    @property
    def id(self) -> str:
        """The task's id (``id:`` in its file)."""
        return self.spec.id

    @property
    def source(self) -> Path:
        """The task file."""
        return self.doc.path

    @property
    def oracle_path(self) -> Path | None:
        """The oracle's reply script, if the task has one."""
        return self.oracle_doc.path if self.oracle_doc is not None else None

    @property
    def kind(self) -> TaskKind:
        """impossible (the agent should FAIL), retrieval (the check reads the answer) or feasible."""
        if self.spec.expect == "fail":
            return "impossible"
        return "retrieval" if _mentions_answer(self.spec.check) else "feasible"

    def instantiate(self, seed: int) -> TaskInstance:
        """The variant of this task for ``seed``: parameters drawn, placeholders filled.

        Raises:
            ConfigError: a placeholder or a derived parameter is wrong, or the rendered check or
                oracle script is not valid (naming the file, line and key).
        """
        try:
            params = draw_params(self.spec.params, self.spec.id, seed)
            text = render(self.spec.text, params, ("text",))
            setup_data = render(self.spec.setup.model_dump(), params, ("setup",))
            check_data = render(self.spec.check, params, ("check",))
        except TemplateError as exc:
            raise self.doc.error(exc.message, exc.at) from None
        if not isinstance(text, str):
            raise self.doc.error("the text must stay text (it is a single placeholder of a non-text value)",
                                 ("text",))
        try:
            check = None if check_data is None else parse_check(check_data)
        except CheckError as exc:
            raise self.doc.error(exc.message, exc.at) from None
        try:
            setup = Setup.model_validate(setup_data)
        except ValidationError as exc:
            key, message = first_problem(exc)
            raise self.doc.error(message, ("setup", *key)) from None
        return TaskInstance(self, seed, params, text, setup, check, self._oracle(params))

    def _oracle(self, params: Mapping[str, Any]) -> Script | None:
        doc = self.oracle_doc
        if doc is None:
            return None
        try:
            data = render(doc.data, params)
            return Script.model_validate(data)
        except TemplateError as exc:
            raise doc.error(exc.message, exc.at) from None
        except ValidationError as exc:
            key, message = first_problem(exc)
            raise doc.error(message, key) from None


def _mentions_answer(data: Any) -> bool:
    """Whether raw check data has an answer check anywhere (before placeholders are filled)."""
    if isinstance(data, dict):
        return "answer" in data or any(_mentions_answer(value) for value in data.values())
    if isinstance(data, list):
        return any(_mentions_answer(item) for item in data)
    return False


@dataclass(frozen=True)
class TaskInstance:
    """One variant of a task: what the agent is asked, the phone to start from, how to judge it."""

    task: SuiteTask
    seed: int
    params: dict[str, Any]
    text: str
    setup: Setup
    check: Check | None
    oracle: Script | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        """A name for the run directory: ``<task id>-s<seed>``."""
        return f"{self.task.id}-s{self.seed}"


def judge(instance: TaskInstance, facts: RunFacts, *, gave_up: bool) -> Verdict:
    """Whether the run did the task (see the module docstring for each kind).

    ``gave_up``: the agent itself ended the run in FAIL (its reply said so), rather than a limit,
    an error or a signal.
    """
    app = instance.task.spec.app
    if instance.task.spec.expect == "fail":
        if facts.status == MobileAgentStatus.FINISH:
            return Verdict(False, "the task cannot be done as asked, but the run finished: "
                                  f"{match.show(facts.answer, 120)}")
        if not gave_up:
            return Verdict(False, f"the run failed, but not by the agent's own FAIL: {match.show(facts.reason, 120)}")
        if instance.check is not None:
            verdict = evaluate(instance.check, facts, app)
            if not verdict.passed:
                return Verdict(False, f"the agent said FAIL, but {verdict.why}")
        return Verdict(True, f"the agent said FAIL: {match.show(facts.reason, 120)}")
    if instance.check is None:  # the loader refuses such a task; a hand-made spec may lack it
        raise ConfigError("a task that can be done needs a check", path=str(instance.task.source), key="check")
    return evaluate(instance.check, facts, app)

