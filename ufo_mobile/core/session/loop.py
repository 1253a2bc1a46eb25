"""The round loop: ``handle -> next_state -> next_agent`` until a round-ending state, and the
phone's connect before the first step (cancellable by a signal like a step)."""

from __future__ import annotations

import asyncio

from ufo_mobile.core.agents.base import BasicAgent
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.states.base import AgentLike
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import DeviceError


class Round:
    """One request handled by one or more agents until a round-ending state."""

    def __init__(self, request: str, agent: AgentLike, context: RunContext) -> None:
        self.request = request
        self.agent = agent
        self.context = context
        self.subtasks = 0

    async def run(self) -> AgentLike:
        """Drive the loop; returns the agent that ended the round. The round-ending state's own
        work (FAIL keeps the final screen) runs once, at the end."""
        agent = self.agent
        while not agent.state.is_round_end():
            await agent.handle(self.context)
            state = agent.state.next_state(agent)
            next_agent = agent.state.next_agent(agent)
            next_agent.set_state(state)
            agent = next_agent
            if state.is_subtask_end():
                self.subtasks += 1
        await agent.handle(self.context)
        self.agent = agent
        return agent


async def connect_device(agent: BasicAgent, device: DeviceDriver, ctx: RunContext) -> None:
    """Connect the run's phone, cancellable by a signal like a step; a phone that cannot be reached
    (or a signal) puts the agent in FAIL with the reason before its first step."""
    connect = asyncio.ensure_future(device.connect())
    ctx.current_step_task = connect  # a signal cancels the connect like a step
    try:
        await connect
    except DeviceError as exc:
        agent.fail_with(f"cannot connect to the device: {exc}")
    except asyncio.CancelledError:
        if not (connect.cancelled() and ctx.interrupted and not ctx.abandoned):
            raise
        agent.fail_with(ctx.stop_reason)
    finally:
        ctx.current_step_task = None
    if agent.status == MobileAgentStatus.FAIL:  # the rulebook's NONE -> FAIL: the run never started
        agent.set_state(agent.state.next_state(agent))


async def run_round(agent: BasicAgent, device: DeviceDriver, ctx: RunContext) -> AgentLike:
    """Connect the phone, then drive the round; the agent that ended it."""
    await connect_device(agent, device, ctx)
    return await Round(ctx.request, agent, ctx).run()
