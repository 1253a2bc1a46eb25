"""The step budget, one meaning in every mode (``limits.max_steps``).

A step is one action on the phone, or the final answer (FINISH or FAIL). Every action counts: one
in a turn that chains several, each tool call in CodeAct code (a code turn that calls nothing costs
one), the executor's action in reasoning mode, the text manipulator's typing. A manager's planning
turns are not steps; they have their own bound (``limits.max_planner_turns``). Asking the user, a
takeover and a person's approval cost nothing.

The budget always keeps room for the final answer: with one step left only FINISH or FAIL fits,
and an action asked for then does not run (the run ends at the step limit). So every agent, the
manager too, gets a turn to look at the result of its last action before the run ends, and a task
that needs A actions needs a budget of A + 1 in every mode.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepBudget:
    limit: int  # limits.max_steps
    used: int   # SharedState.steps_used

    @property
    def left(self) -> int:
        return max(0, self.limit - self.used)

    @property
    def actions_left(self) -> int:
        """Actions that may still run, keeping one step for the final answer."""
        return max(0, self.left - 1)

    def limit_reason(self) -> str:
        return f"reached the step limit ({self.limit} steps) without finishing"

    def line(self, final: str = "reply FINISH or FAIL") -> str:
        """The budget as the model reads it at the top of its turn; ``final``: how it gives its final answer."""
        if self.actions_left == 0:
            return (f"Step budget: {self.used} of {self.limit} steps used. Only your final answer fits now: {final}; "
                    "an action would not run.")
        return (f"Step budget: {self.used} of {self.limit} steps used, {self.left} left: room for "
                f"{self.actions_left} more action{'s' if self.actions_left != 1 else ''} and then the final answer.")

    def planner_line(self, turns: int, turn_limit: int) -> str:
        """The budget as the manager reads it: the executor's actions, and its own turns."""
        counted = f"planning turn {turns + 1} of at most {turn_limit}"
        if self.actions_left == 0:
            return (f"Step budget: {self.used} of {self.limit} steps used ({counted}). Only your final answer "
                    "fits now: answer with <request_accomplished>; a plan would not be carried out.")
        return (f"Step budget: {self.used} of {self.limit} steps used ({counted}); room for {self.actions_left} "
                f"more action{'s' if self.actions_left != 1 else ''} and then your final answer.")
