"""The one place that builds a run: its settings laid over for where it runs, its models (the main
one and one per role the settings name under ``models:``), the phone, the person in the loop (the
operator), the run directory's writer and the root agent.

Every run is built here: a ``Session`` (``ufo_mobile/core/session/session.py``) made without parts
makes a ``RunBuilder``, and ``run``, ``replay``, ``eval``, ``batch``, ``serve`` and ``open_agent``
all run through a ``Session``; ``placed`` lays a run over another phone and log directory (``batch``,
``serve``) and ``open_device`` opens a phone on its own (the MCP server). The session asks for the
parts in the order a run needs them: the models and the phone before the run directory, so that a
bad file is a ``ConfigError`` with nothing written; the device and the agent once the run has its
directory and its log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ufo_mobile.core.agents.base import BasicAgent
from ufo_mobile.core.agents.factory import build_root
from ufo_mobile.core.agents.human import Operator
from ufo_mobile.core.agents.limits import StepTimer, event_loop_timer
from ufo_mobile.core.builder.parts import Models
from ufo_mobile.core.builder.start import Resumed
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.device.factory import build_sim_phone, make_driver, wrap_driver
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.factory import make_model
from ufo_mobile.core.llm.structured import load_output_spec
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.tools.build import check_tool_settings
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.trace import runs
from ufo_mobile.core.trace.writer import Redactor, RunWriter
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.replay.plan import ReplayPlan
from ufo_mobile.settings import DeviceSettings, Settings

if TYPE_CHECKING:
    from ufo_mobile.sim.phone.simphone import SimPhone


class RunBuilder:
    """The parts of one run from ``settings`` (``RunParts``); ``device`` and ``model`` are the
    caller's own in place of the settings' (they stay open for the caller), ``operator`` the person
    in the loop (takeovers, confirmations; None: nobody).

    Raises:
        ConfigError: a credential the settings name is missing.
    """

    def __init__(self, settings: Settings, *, device: DeviceDriver | None = None, model: ChatModel | None = None,
                 operator: Operator | None = None, step_timer: StepTimer = event_loop_timer) -> None:
        self.settings = settings
        self.given_device = device
        self.given_model = model
        self.operator = operator
        self.step_timer = step_timer  # tests pass one they fire themselves
        self.credentials = CredentialManager.from_settings(settings.credentials)

    @property
    def owns_device(self) -> bool:
        """Whether the run's phone is its own (closed with the run), not one the caller passed in."""
        return self.given_device is None

    def check(self) -> None:
        """A custom tool that does not load is a config error, and so is an output model that does
        not import: raised before the run has a directory."""
        check_tool_settings(self.settings.tools)
        if self.settings.task.output is not None:
            load_output_spec(self.settings.task.output)

    def models(self) -> Models:
        """The main model (the caller's, else the settings' ``model``) and one per role under
        ``models:`` (always built here). Bad files are config errors: no run directory yet."""
        s = self.settings
        main = self.given_model or make_model(s.model, mode=s.mode)
        roles = {str(role): make_model(s.model_for(role), mode=s.mode) for role in s.models}
        owned = [*([main] if self.given_model is None else []), *roles.values()]
        return Models(main, roles, owned)

    def phone(self) -> SimPhone | None:
        """The simulated phone the settings describe, when the run drives one of its own."""
        if self.given_device is None and self.settings.device.kind == "sim":
            return build_sim_phone(self.settings.device.sim)
        return None

    def new_writer(self, run_id: str, redactor: Redactor) -> RunWriter:
        """A new run directory under ``logs.dir`` (runs killed earlier there are marked cut off first)."""
        log_dir = Path(self.settings.logs.dir)
        runs.sweep(log_dir)  # never left "RUNNING"
        try:
            return RunWriter.open(log_dir, run_id, redactor)
        except RunWriteError as exc:  # no run has started: this is a bad log directory
            raise ConfigError(f"cannot create the run directory: {exc}", key="logs.dir") from exc

    def resumed_writer(self, run_dir: Path, redactor: Redactor) -> tuple[RunWriter, Resumed]:
        """The directory of an interrupted run, taken over where its last step ended. Everything read
        back is checked first: a bad file is a ConfigError naming it, with the run left as it was."""
        point = runs.resume_point(run_dir)  # ConfigError: alive, finished, or nothing to continue from
        resumed = Resumed.of(point, run_dir)  # ConfigError: a state of the wrong shape
        try:
            return RunWriter(run_dir, redactor, existing=True), resumed
        except RunWriteError as exc:
            raise ConfigError(f"cannot resume the run: {exc}", path=str(run_dir)) from exc

    def device(self, phone: SimPhone | None, *, logger: Any, writer: RunWriter) -> DeviceDriver:
        """The run's phone (the caller's driver, else the settings'), wrapped as the settings ask."""
        s = self.settings.device
        return wrap_driver(self.given_device or make_driver(s, logger=logger, phone=phone), s, writer)

    def agent(self, device: DeviceDriver, model: ChatModel, *, replay: ReplayPlan | None, logger: Any,
              redact: Callable[[str], str]) -> BasicAgent:
        """The root agent for the settings' mode, behind a replay of ``replay`` when given; every agent
        of the run shares one ``Phone`` on ``device``, which redacts its screens with ``redact`` (the
        run directory's redactor) from the first."""
        phone = Phone(device, settings=self.settings, credentials=self.credentials, redact=redact, logger=logger)
        # a scripted model built from the settings is the recorded run's own script: a hand-over skips on
        return build_root(self.settings, phone=phone, model=model, replay=replay,
                          skip_scripted=self.given_model is None, logger=logger, step_timer=self.step_timer,
                          operator=self.operator)


def placed(settings: Settings, device: Mapping[str, Any], log_dir: Path) -> Settings:
    """``settings`` for a run on another phone (``device``: values of ``DeviceSettings``' own fields
    laid over the settings') writing under ``log_dir``, as ``batch`` and ``serve`` place a run."""
    return settings.model_copy(update={"device": settings.device.model_copy(update=dict(device)),
                                       "logs": settings.logs.model_copy(update={"dir": log_dir})})


def open_device(settings: DeviceSettings, *, logger: Any = None) -> DeviceDriver:
    """A driver for the phone ``settings`` name, on its own (no run: ``mcp`` serves it)."""
    return make_driver(settings, logger=logger)

