"""The root agent of a run, built from the settings' ``mode``.

- ``direct``: the flat ``MobileAgent`` (one JSON action per step);
- ``reasoning``: a ``ManagerAgent`` that plans and hands subgoals to its executor and sub-agents;
- ``codeact``: a ``CodeActAgent`` whose model writes short Python calling the tools.

The session drives whichever agent this returns through the same round loop. ``build_root`` puts a
``ReplayAgent`` in front of it when the run replays a trajectory (``replay RUN_DIR``, the run cache):
the replay goes first and hands over to that agent where the screen differs.
"""

from __future__ import annotations

from typing import Any

from ufo_mobile.core.agents.base import BasicAgent
from ufo_mobile.core.agents.human import Operator
from ufo_mobile.core.agents.limits import StepTimer, event_loop_timer
from ufo_mobile.core.agents.mobile import MobileAgent
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.replay.plan import ReplayPlan
from ufo_mobile.settings import Settings


def build_agent(settings: Settings, *, device: DeviceDriver, model: ChatModel, logger: Any = None,
                step_timer: StepTimer = event_loop_timer, credentials: CredentialManager | None = None,
                operator: Operator | None = None) -> BasicAgent:
    """The root agent for ``settings.mode``."""
    if settings.mode == "reasoning":
        from ufo_mobile.core.agents.reasoning import ManagerAgent

        return ManagerAgent("Manager", device=device, model=model, settings=settings, logger=logger,
                            step_timer=step_timer, credentials=credentials, operator=operator)
    if settings.mode == "codeact":
        from ufo_mobile.core.agents.codeact import CodeActAgent

        return CodeActAgent("CodeActAgent", device=device, model=model, settings=settings, logger=logger,
                            step_timer=step_timer, credentials=credentials, operator=operator)
    return MobileAgent("MobileAgent", device=device, model=model, settings=settings, logger=logger,
                       step_timer=step_timer, credentials=credentials, operator=operator)


def build_root(settings: Settings, *, device: DeviceDriver, model: ChatModel, replay: ReplayPlan | None = None,
               skip_scripted: bool = False, logger: Any = None, step_timer: StepTimer = event_loop_timer,
               credentials: CredentialManager | None = None, operator: Operator | None = None) -> BasicAgent:
    """The agent a run starts with: ``build_agent``'s, or, to replay ``replay``, a ``ReplayAgent``
    whose fallback is that agent (none when the replay stops on a mismatch). ``skip_scripted``: see
    ``ReplayAgent``."""
    common: dict[str, Any] = {"device": device, "model": model, "logger": logger, "step_timer": step_timer,
                              "credentials": credentials, "operator": operator}
    if replay is None:
        return build_agent(settings, **common)
    from ufo_mobile.core.agents.replay import ReplayAgent

    fallback = build_agent(settings, **common) if replay.fallback == "agent" else None
    return ReplayAgent("Replay", plan=replay, fallback=fallback, skip_scripted=skip_scripted, settings=settings,
                       **common)
