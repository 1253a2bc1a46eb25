"""What a session is built from, as the session asks for it: ``RunParts`` (made by
``ufo_mobile.core.builder.RunBuilder``, the one place that builds a run) and the run's ``Models``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ufo_mobile.core.agents.base import BasicAgent
from ufo_mobile.core.builder.start import Resumed
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.llm.base import ChatModel, ManagedModel
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.trace.writer import Redactor, RunWriter
from ufo_mobile.replay.plan import ReplayPlan


@dataclass
class Models:
    """A run's models: the main one, one per role the settings name (``models:``), and those of
    them the run built (it closes those; a model passed in stays open for its owner)."""

    main: ChatModel
    roles: dict[str, ChatModel] = field(default_factory=dict)
    owned: list[ChatModel] = field(default_factory=list)

    def managed(self) -> Iterator[ManagedModel]:
        """The models that hold resources of their own (``ManagedModel``)."""
        for each in (self.main, *self.roles.values()):
            if isinstance(each, ManagedModel):
                yield each

    def secrets(self) -> list[str]:
        """The models' own secrets (a key read from the environment is a secret too)."""
        return [secret for each in self.managed() for secret in each.secrets()]

    def bind_logger(self, logger: Any) -> None:
        """Retries and fallbacks go to the run's log."""
        for each in self.managed():
            each.bind_logger(logger)

    async def aclose(self) -> None:
        """Close the models the run built."""
        for each in self.owned:
            if isinstance(each, ManagedModel):
                await each.aclose()


class RunParts(Protocol):
    """The pieces of one run, built when the session asks for them (see ``Session.opened``)."""

    credentials: CredentialManager

    @property
    def owns_device(self) -> bool:
        """Whether the run's phone is its own (closed with the run) or the caller's."""

    def check(self) -> None:
        """Raise ConfigError for a file the run would load later (a tool, an output model)."""

    def models(self) -> Models:
        """The run's models; a bad model setting is a ConfigError."""
        ...

    def phone(self) -> Any:
        """The simulated phone to drive, built before the run directory (None: not one)."""

    def new_writer(self, run_id: str, redactor: Redactor) -> RunWriter:
        """The writer of a new run directory named ``run_id``."""
        ...

    def resumed_writer(self, run_dir: Path, redactor: Redactor) -> tuple[RunWriter, Resumed]:
        """The writer of an interrupted run's directory, and where the run goes on from."""
        ...

    def device(self, phone: Any, *, logger: Any, writer: RunWriter) -> DeviceDriver:
        """The driver of the run's phone (``phone``: what ``phone()`` built)."""
        ...

    def agent(self, device: DeviceDriver, model: ChatModel, *, replay: ReplayPlan | None, logger: Any,
              redact: Callable[[str], str]) -> BasicAgent:
        """The run's root agent, on ``device`` and asking ``model``."""
        ...
