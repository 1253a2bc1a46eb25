"""Custom tools that task files in the tests name by dotted path (``tests.unit.tools.custom_tools:...``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ufo_mobile.errors import InvalidActionError

if TYPE_CHECKING:  # only for type checkers: the registry must not need it at run time
    from ufo_mobile.core.tools.context import ActionContext, ActionResult

NOT_CALLABLE = 42


async def shout(ctx: ActionContext, words: str, times: int = 1) -> str:
    """Type the words in capitals into the focused field.

    The rest of the docstring is not part of the description.
    """
    if times > 3:
        raise InvalidActionError("no more than 3 times")
    await ctx.driver.input_text(" ".join([words.upper()] * times))
    return f"shouted {times} time(s)"


def count_controls(ctx: ActionContext) -> tuple[bool, str]:
    return True, f"{len(ctx.ui.elements)} controls"


def count_visits(ctx: ActionContext) -> ActionResult:
    """Count this tool's calls in the run, in the shared state's custom_variables."""
    from ufo_mobile.core.tools.context import ActionResult

    visits = int(ctx.shared_state.custom_variables.get("visits", 0)) + 1
    return ActionResult(True, f"visit {visits}", state_update={"custom_variables": {"visits": visits}})
