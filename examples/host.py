"""A session host in the style of UFO's: one loop drives a mobile agent and a second, non-mobile
agent, in alternating rounds, through UFO's state protocol, sharing one context.

    python examples/host.py [TASK.yaml]        # default: the shipped demo task (the simulated phone)

The toy agent is a "notebook" that works on the desktop side of a session: before the phone's round
it writes down what it is about to ask for, after it reads the phone's outcome from the shared
context and writes a summary. It has its own states and its own registry, exactly as a UFO agent
of another platform would, and knows nothing about phones. Exit 0 when every round completed.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ufo_mobile import AgentState, AgentStateManager, RunContext, open_agent, round_outcome  # noqa: E402
from ufo_mobile.shipped import CONFIG_DIR  # noqa: E402


class NotebookStateManager(AgentStateManager):
    """The toy agent's own state registry."""


class NotebookState(AgentState):
    def next_state(self, agent: Any) -> AgentState:
        return agent.state_manager.get_state(agent.status)


@NotebookStateManager.register
class Writing(NotebookState):
    """One step: write one line about the request into the shared blackboard."""

    async def handle(self, agent: Any, context: RunContext | None = None) -> None:
        assert context is not None
        notes = context.blackboard.setdefault("notebook", [])
        if context.results:  # what the rounds before said
            last = context.results[-1]
            verdict = "completed" if last["completed"] else f"failed ({last['reason']})"
            notes.append(f"{last['agent']}: {last['request']!r} {verdict} after {context.session_step} step(s), "
                         f"cost {'unknown' if context.cost is None else f'${context.cost:.4f}'}")
        else:
            notes.append(f"plan: {context.request}")
        agent.answer, agent.status = notes[-1], "FINISH"

    @classmethod
    def name(cls) -> str:
        return "WRITING"


@NotebookStateManager.register
class Finished(NotebookState):
    async def handle(self, agent: Any, context: RunContext | None = None) -> None:
        return None

    def is_round_end(self) -> bool:
        return True

    def is_subtask_end(self) -> bool:
        return True

    @classmethod
    def name(cls) -> str:
        return "FINISH"  # UFO's name for a round that ended well


class Notebook:
    """A non-mobile agent: what UFO's host needs of an agent (name, state, set_state, status)."""

    def __init__(self) -> None:
        self.name = "Notebook"
        self.state_manager = NotebookStateManager()
        self.status, self.reason, self.answer, self.failed = "WRITING", "", "", False
        self._state = self.state_manager.get_state("WRITING")

    @property
    def state(self) -> AgentState:
        return self._state

    def set_state(self, state: AgentState) -> None:
        self._state = state

    async def handle(self, context: RunContext) -> None:
        await self._state.handle(self, context)

    def new_round(self) -> None:
        self.status = "WRITING"
        self._state = self.state_manager.get_state("WRITING")


async def host(task: Path) -> int:
    async with open_agent(task) as mobile:
        context = mobile.context  # one context for the whole session, shared by both agents
        notebook = Notebook()
        phone_request = context.request
        rounds: list[tuple[Any, str]] = [(notebook, phone_request), (mobile.agent, phone_request),
                                         (notebook, "summarise the session")]
        for number, (agent, request) in enumerate(rounds, 1):
            context.request, context.round_step = request, 0
            if agent is notebook:
                notebook.new_round()
            # the one loop: UFO's BaseRound, for whichever agent this round belongs to
            while not agent.state.is_round_end():
                await agent.state.handle(agent, context)
                state = agent.state.next_state(agent)
                agent = agent.state.next_agent(agent)
                agent.set_state(state)
            if agent is notebook:
                outcome = round_outcome(agent, request)
                context.results.append(outcome)
            else:
                outcome = await mobile.end_round(agent)
            print(f"round {number}: {outcome['agent']} -> {outcome['status']}"
                  f"{': ' + outcome['result'] if outcome['completed'] else ': ' + outcome['reason']}")
    result = mobile.result
    assert result is not None
    print(f"notebook: {context.blackboard['notebook']}")
    print(f"run: {result.status} in {result.steps} step(s); recorded in {result.run_dir}")
    return 0 if all(r["completed"] for r in context.results) else 1


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else CONFIG_DIR / "tasks" / "demo.yaml"
    raise SystemExit(asyncio.run(host(path)))
