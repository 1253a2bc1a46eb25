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
from ufo_mobile.core.agents.options import AgentOptions
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.replay.plan import ReplayPlan
from ufo_mobile.settings import Settings


def run_phone(settings: Settings, *, device: DeviceDriver | None, phone: Phone | None,
              credentials: CredentialManager | None, logger: Any) -> Phone:
    """``phone``, or the run's phone made on ``device`` (one of them is needed).

    Raises:
        ConfigError: a custom tool cannot be loaded, or ``tools.disabled`` names an unknown tool.
    """
    if phone is not None:
        return phone
    if device is None:
        raise TypeError("an agent needs a device or a phone")
    return Phone(device, settings=settings, credentials=credentials, logger=logger)


def build_agent(settings: Settings, *, device: DeviceDriver | None = None, model: ChatModel, logger: Any = None,
                step_timer: StepTimer = event_loop_timer, credentials: CredentialManager | None = None,
                operator: Operator | None = None, phone: Phone | None = None) -> BasicAgent:
    """The root agent for ``settings.mode``, on ``phone`` (or a phone made on ``device``), which every
    agent under it shares."""
    phone = run_phone(settings, device=device, phone=phone, credentials=credentials, logger=logger)
    common: dict[str, Any] = {"phone": phone, "model": model, "settings": settings,
                              "options": AgentOptions(logger=logger, step_timer=step_timer, operator=operator)}
    if settings.mode == "reasoning":
        from ufo_mobile.core.agents.reasoning import ManagerAgent

        return ManagerAgent("Manager", **common)
    if settings.mode == "codeact":
        from ufo_mobile.core.agents.codeact import CodeActAgent

        return CodeActAgent("CodeActAgent", **common)
    return MobileAgent("MobileAgent", **common)


def build_root(settings: Settings, *, device: DeviceDriver | None = None, model: ChatModel,
               replay: ReplayPlan | None = None, skip_scripted: bool = False, logger: Any = None,
               step_timer: StepTimer = event_loop_timer, credentials: CredentialManager | None = None,
               operator: Operator | None = None, phone: Phone | None = None) -> BasicAgent:
    """The agent a run starts with: ``build_agent``'s, or, to replay ``replay``, a ``ReplayAgent``
    whose fallback is that agent (none when the replay stops on a mismatch). ``skip_scripted``: see
    ``ReplayAgent``. Every agent of the run shares ``phone`` (made on ``device`` when not given):
    made with the run's redactor, or bound to it before the first step (``BasicAgent.bind_run``)."""
    phone = run_phone(settings, device=device, phone=phone, credentials=credentials, logger=logger)
    common: dict[str, Any] = {"model": model, "logger": logger, "step_timer": step_timer, "operator": operator}
    if replay is None:
        return build_agent(settings, phone=phone, **common)
    from ufo_mobile.core.agents.replay import ReplayAgent

    fallback = build_agent(settings, phone=phone, **common) if replay.fallback == "agent" else None
    return ReplayAgent("Replay", plan=replay, fallback=fallback, skip_scripted=skip_scripted, phone=phone,
                       model=model, settings=settings,
                       options=AgentOptions(logger=logger, step_timer=step_timer, operator=operator))
