"""CodeAct mode (seed 001's direct mode with code): the flat agent's loop, where each step's model
reply is short Python calling the tools, run in the sandbox (``ufo_mobile.processors.codeact``).

Steps, limits, takeovers and the run directory are the flat agent's; each step's code and the
calls it made are recorded (``result.json`` and the step line). Actions that need a person's
approval are not available in code (they would need a pause in the middle of it).
"""

from __future__ import annotations

from ufo_mobile.agents.mobile import MobileAgent
from ufo_mobile.processors.base import Phase
from ufo_mobile.processors.codeact import CodeActInteraction, CodeExecution
from ufo_mobile.processors.llm_interaction import LLMInteraction


class CodeActAgent(MobileAgent):
    interaction_class: type[LLMInteraction] = CodeActInteraction

    def execution(self) -> Phase:
        return CodeExecution(self.tools, self.device, self.cache, self.settings.agent, self.settings.codeact,
                             state_provider=self.state_provider, credentials=self.credentials)
