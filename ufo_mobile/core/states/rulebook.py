"""The legal moves of each agent, held by a ``transitions`` Machine.

The machine is only the rulebook: it validates a move and logs it. No work runs in its callbacks;
the round loop decides the next state and then fires exactly one trigger (named after the
destination state) through ``AgentMachine.move``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from transitions import EventData, Machine
from transitions.core import MachineError

from ufo_mobile.errors import IllegalTransitionError


@dataclass(frozen=True)
class Rulebook:
    """States and ``(source, dest)`` moves of one kind of agent, as data."""

    name: str
    states: Sequence[str]
    moves: Sequence[tuple[str, str]]
    initial: str
    final: frozenset[str] = field(default_factory=frozenset)

    def transitions(self) -> list[dict[str, Any]]:
        by_dest: dict[str, list[str]] = {}
        for source, dest in self.moves:
            by_dest.setdefault(dest, []).append(source)
        return [{"trigger": dest, "source": sources, "dest": dest} for dest, sources in by_dest.items()]

    def allows(self, source: str, dest: str) -> bool:
        return (source, dest) in self.moves


MOBILE_RULES = Rulebook(
    name="mobile",
    states=("NONE", "CONTINUE", "TAKEOVER", "PENDING", "CONFIRM", "FINISH", "FAIL"),
    moves=(
        ("NONE", "CONTINUE"),
        ("NONE", "FAIL"),          # the run could not start (no device)
        ("CONTINUE", "CONTINUE"),
        ("CONTINUE", "FINISH"),
        ("CONTINUE", "FAIL"),
        ("CONTINUE", "TAKEOVER"),  # the model asks a person to take over
        ("TAKEOVER", "CONTINUE"),  # the person is done
        ("TAKEOVER", "FAIL"),      # nobody can answer, the person aborts, or no answer in time
        ("CONTINUE", "PENDING"),   # the model asks the user a question
        ("PENDING", "CONTINUE"),   # the answer is in; the model reads it next step
        ("PENDING", "FAIL"),       # nobody can answer (the run needs a person), or no answer in time
        ("CONTINUE", "CONFIRM"),   # the chosen action needs a person's approval
        ("CONFIRM", "CONTINUE"),   # approved (and run) or refused (a failed action the model sees)
        ("CONFIRM", "FINISH"),     # the approved action was complete(success=true)
        ("CONFIRM", "FAIL"),       # ... complete(success=false), or the run was stopped while waiting
        ("FAIL", "FINISH"),        # cleanup, for a host that drives the agent on
        ("FINISH", "FINISH"),      # a no-op
    ),
    initial="NONE",
    final=frozenset({"FINISH"}),
)


class _Model:
    """The private object ``transitions`` binds to (``state``, ``trigger`` and its helpers)."""

    state: str
    trigger: Callable[..., bool]  # bound by Machine; declared here for the type checker only


class AgentMachine:
    """One agent's position in its rulebook. Fires triggers and logs every move."""

    def __init__(self, rules: Rulebook, *, logger: Any = None, agent_name: str = "") -> None:
        self.rules = rules
        self.agent_name = agent_name or rules.name
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.fsm")
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

    def can_move(self, dest: str) -> bool:
        return self.rules.allows(self.current, dest)

    def move(self, dest: str, *, step: int = 0, reason: str = "", run_id: str = "") -> None:
        """Move to ``dest``.

        Raises:
            IllegalTransitionError: the rulebook has no move from the current state to ``dest``.
        """
        source = self.current
        if dest not in self.rules.states or not self.rules.allows(source, dest):
            raise IllegalTransitionError(source, dest, machine=self._machine.name.strip(": "))
        try:
            self._model.trigger(dest, step=step, reason=reason, run_id=run_id)
        except MachineError as exc:  # pragma: no cover - allows() mirrors the machine
            raise IllegalTransitionError(source, dest, machine=self.rules.name) from exc

    def _on_move(self, event: EventData) -> None:
        assert event.transition is not None  # after_state_change always runs inside a transition
        self._log.info(
            "transition",
            agent=self.agent_name,
            run_id=event.kwargs.get("run_id", ""),
            step=event.kwargs.get("step", 0),
            **{"from": event.transition.source, "to": event.transition.dest},
            reason=event.kwargs.get("reason", ""),
        )
