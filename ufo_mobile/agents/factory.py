"""The root agent of a run, built from the settings' ``mode``.

- ``direct``: the flat ``MobileAgent`` (one JSON action per step);
- ``reasoning``: a ``ManagerAgent`` that plans and hands subgoals to its executor and sub-agents;
- ``codeact``: a ``CodeActAgent`` whose model writes short Python calling the tools.

The session drives whichever agent this returns through the same round loop.
"""

from __future__ import annotations

from typing import Any

from ufo_mobile.agents.base import BasicAgent
from ufo_mobile.agents.human import Operator
from ufo_mobile.agents.limits import StepTimer, event_loop_timer
from ufo_mobile.agents.mobile import MobileAgent
from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.llm.base import ChatModel
from ufo_mobile.settings import Settings
from ufo_mobile.tools.credentials import CredentialManager


def build_agent(settings: Settings, *, device: DeviceDriver, model: ChatModel, logger: Any = None,
                step_timer: StepTimer = event_loop_timer, credentials: CredentialManager | None = None,
                operator: Operator | None = None) -> BasicAgent:
    """The root agent for ``settings.mode``."""
    if settings.mode == "reasoning":
        from ufo_mobile.agents.reasoning import ManagerAgent

        return ManagerAgent("Manager", device=device, model=model, settings=settings, logger=logger,
                            step_timer=step_timer, credentials=credentials, operator=operator)
    if settings.mode == "codeact":
        from ufo_mobile.agents.codeact import CodeActAgent

        return CodeActAgent("CodeActAgent", device=device, model=model, settings=settings, logger=logger,
                            step_timer=step_timer, credentials=credentials, operator=operator)
    return MobileAgent("MobileAgent", device=device, model=model, settings=settings, logger=logger,
                       step_timer=step_timer, credentials=credentials, operator=operator)
