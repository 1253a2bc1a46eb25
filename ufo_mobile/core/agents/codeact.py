"""CodeAct mode (seed 001's direct mode with code): the flat agent's loop, where each step's model
reply is short Python calling the tools, run in the sandbox (``ufo_mobile.core.processors.codeact``).

Steps, limits, takeovers and the run directory are the flat agent's; each step's code and the
calls it made are recorded (``result.json`` and the step line). The code's calls go through the
same approval gate as the other modes' actions, count against the same step budget, and
``complete(success, message)`` is checked against ``task.output``; the code keeps facts with the
``remember`` tool (the reply has no JSON fields for it).
"""

from __future__ import annotations

from typing import ClassVar

from ufo_mobile.core.agents.mobile import MobileAgent
from ufo_mobile.core.processors.base import Phase
from ufo_mobile.core.processors.codeact import CodeActInteraction, CodeExecution
from ufo_mobile.core.processors.llm_interaction import LLMInteraction


class CodeActAgent(MobileAgent):
    """The agent of ``mode: codeact``: each reply is Python code that calls the tools, run in a sandbox."""

    interaction_class: type[LLMInteraction] = CodeActInteraction
    json_replies: ClassVar[bool] = False
    model_role: ClassVar[str] = "codeact"

    def execution(self) -> Phase:
        """Phase 3: run the reply's code, whose tool calls act on the phone."""
        return CodeExecution(self.tools, self.phone, self.settings.agent, self.settings.codeact,
                             policy=self.confirm_policy(), attendance=self.attendance(), output=self.output_spec())
