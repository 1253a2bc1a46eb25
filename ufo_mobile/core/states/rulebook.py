"""The legal moves of each agent, decided by a ``transitions`` Machine.

A ``Rulebook`` declares one kind of agent's states and ``(source, dest)`` moves as data; an
``AgentMachine`` builds a ``transitions`` Machine from it, with one trigger per destination state,
and that machine alone decides whether a move is legal: ``can_move`` asks it (``may_<dest>``),
``move`` fires the trigger and turns its ``MachineError`` into ``IllegalTransitionError``.

No work runs in the machine's callbacks, only bookkeeping: the after-move hook logs the move and
hands it (a ``Move``) to the one watcher the agent set, which updates the run's execution state
(``ufo_mobile/core/memory/execution.py``). The round loop decides the next state and then fires
exactly one trigger through ``AgentMachine.move``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from transitions import EventData, Machine
from transitions.core import MachineError

from ufo_mobile.core.status import NONE_STATE, MobileAgentStatus
from ufo_mobile.errors import IllegalTransitionError


@dataclass(frozen=True)
class Rulebook:
    """States and ``(source, dest)`` moves of one kind of agent, as data the machine is built from."""

    name: str
    states: Sequence[str]
    moves: Sequence[tuple[str, str]]
    initial: str
    final: frozenset[str] = field(default_factory=frozenset)

    def transitions(self) -> list[dict[str, Any]]:
        """The moves as ``transitions`` triggers: one per destination, named after it."""
        by_dest: dict[str, list[str]] = {}
        for source, dest in self.moves:
            by_dest.setdefault(dest, []).append(source)
        return [{"trigger": dest, "source": sources, "dest": dest} for dest, sources in by_dest.items()]


@dataclass(frozen=True)
class Move:
    """One move the machine made, as its after-move hook reports it."""

    agent: str
    source: str
    dest: str
    step: int = 0
    reason: str = ""
    run_id: str = ""
    ends_round: bool = False  # the destination state ends the round (the run's outcome is known)


MoveWatcher = Callable[[Move], None]

S = MobileAgentStatus

MOBILE_RULES = Rulebook(
    name="mobile",
    states=(NONE_STATE, S.CONTINUE, S.TAKEOVER, S.PENDING, S.CONFIRM, S.FINISH, S.FAIL),
    moves=(
        (NONE_STATE, S.CONTINUE),
        (NONE_STATE, S.FAIL),       # the run could not start (no device)
        (S.CONTINUE, S.CONTINUE),
        (S.CONTINUE, S.FINISH),
        (S.CONTINUE, S.FAIL),
        (S.CONTINUE, S.TAKEOVER),  # the model asks a person to take over
        (S.TAKEOVER, S.CONTINUE),  # the person is done
        (S.TAKEOVER, S.FAIL),      # nobody can answer, the person aborts, or no answer in time
        (S.CONTINUE, S.PENDING),   # the model asks the user a question
        (S.PENDING, S.CONTINUE),   # the answer is in; the model reads it next step
        (S.PENDING, S.FAIL),       # nobody can answer (the run needs a person), or no answer in time
        (S.CONTINUE, S.CONFIRM),   # the chosen action needs a person's approval
        (S.CONFIRM, S.CONTINUE),   # approved (and run) or refused (a failed action the model sees)
        (S.CONFIRM, S.FINISH),     # the approved action was complete(success=true)
        (S.CONFIRM, S.FAIL),       # ... complete(success=false), or the run was stopped while waiting
        (S.FAIL, S.FINISH),        # cleanup, for a host that drives the agent on
        (S.FINISH, S.FINISH),      # a no-op
    ),
    initial=NONE_STATE,
    final=frozenset({S.FINISH}),
)


class _Model:
    """The private object ``transitions`` binds to (``state``, ``trigger`` and ``may_<trigger>``)."""

    state: str
    trigger: Callable[..., bool]  # bound by Machine; declared here for the type checker only


class AgentMachine:
    """One agent's position in its rulebook. The machine decides every move; each one is logged
    and reported to the watcher (``watch``)."""

    def __init__(self, rules: Rulebook, *, logger: Any = None, agent_name: str = "") -> None:
        self.rules = rules
        self.agent_name = agent_name or rules.name
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.fsm")
        self._watcher: MoveWatcher | None = None
        self._model = _Model()
        states: list[Any] = [
            {"name": s, "final": True} if s in rules.final else s for s in rules.states
        ]
        self._machine = Machine(
            self._model,
            states=states,
            transitions=rules.transitions(),
            initial=rules.initial,
            auto_transitions=False,
            send_event=True,
            after_state_change=self._on_move,
            name=f"{rules.name}:{self.agent_name}",
        )

    @property
    def current(self) -> str:
        return self._model.state

    @property
    def name(self) -> str:
        return self._machine.name.strip(": ")

    def triggers(self) -> list[str]:
        """The moves the machine allows from the current state (its ``get_triggers``)."""
        return sorted(self._machine.get_triggers(self.current))

    def can_move(self, dest: str) -> bool:
        """Whether the machine would move from the current state to ``dest`` (its ``may_<dest>``)."""
        if dest not in self._machine.events:
            return False
        may: Callable[[], bool] = getattr(self._model, f"may_{dest}")
        return may()

    def watch(self, watcher: MoveWatcher | None) -> None:
        """Report every move to ``watcher`` from now on (None: to nobody); it replaces any earlier one."""
        self._watcher = watcher

    def move(self, dest: str, *, step: int = 0, reason: str = "", run_id: str = "",
             ends_round: bool = False) -> None:
        """Fire the trigger named ``dest``.

        Raises:
            IllegalTransitionError: the machine has no such trigger, or none from the current state.
        """
        source = self.current
        if dest not in self._machine.events:
            raise IllegalTransitionError(source, dest, machine=self.name)
        try:
            moved = self._model.trigger(dest, step=step, reason=reason, run_id=run_id, ends_round=ends_round)
        except MachineError as exc:
            raise IllegalTransitionError(source, dest, machine=self.name) from exc
        if not moved:  # pragma: no cover - no move is guarded by a condition today
            raise IllegalTransitionError(source, dest, machine=self.name)

    def _on_move(self, event: EventData) -> None:
        """The after-move hook: bookkeeping only (the log line, the watcher)."""
        assert event.transition is not None  # after_state_change always runs inside a transition
        kw = event.kwargs
        move = Move(self.agent_name, event.transition.source, self.current, step=kw.get("step", 0),
                    reason=kw.get("reason", ""), run_id=kw.get("run_id", ""), ends_round=kw.get("ends_round", False))
        self._log.info("transition", agent=move.agent, run_id=move.run_id, step=move.step,
                       **{"from": move.source, "to": move.dest}, reason=move.reason)
        if self._watcher is not None:
            self._watcher(move)
