"""What a phase may return: an update, chat messages (appended through add_messages), or nothing."""

from __future__ import annotations

from typing import Any

import pytest

from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.processors.base import PhaseResult, Processor
from ufo_mobile.core.processors.context import StepContext


class Returns:
    always = False

    def __init__(self, name: str, result: Any) -> None:
        self.name = name
        self.result = result

    async def run(self, ctx: StepContext) -> PhaseResult:
        return self.result  # type: ignore[no-any-return]


def make_ctx(shared: SharedState | None = None) -> StepContext:
    return StepContext(run_id="r", step=1, agent_name="A", request="do it", shared=shared or SharedState())


async def test_a_phase_may_return_messages_an_update_or_nothing() -> None:
    hello = ChatMessage(role="user", content="hello", id="m1")
    again = ChatMessage(role="user", content="hello again", id="m1")
    answer = ChatMessage(role="assistant", content="hi")
    phases = [Returns("messages", [hello, answer]), Returns("update", {"plan": ["a"]}), Returns("nothing", None),
              Returns("replayed", [again]), Returns("none at all", [])]
    ctx = await Processor(phases).process(make_ctx())
    assert ctx.shared.message_history == [hello, answer]  # the same id again is not added twice
    assert ctx.shared.plan == ["a"]
    assert set(ctx.timings) == {"messages", "update", "nothing", "replayed", "none at all"}


@pytest.mark.parametrize("result", [["not a message"], "text", 3])
async def test_anything_else_is_a_programming_error(result: Any) -> None:
    with pytest.raises(TypeError):
        await Processor([Returns("odd", result)]).process(make_ctx())
