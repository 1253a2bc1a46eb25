"""The one exception tree of ufo_mobile.

::

    UfoMobileError
    ├── ConfigError                 a bad settings or task file (file, key path, line)
    ├── DeviceError                 transport/device failures, always carry the serial
    │   ├── DeviceDisconnectedError
    │   ├── DeviceTimeoutError
    │   └── DeviceCommandError
    │       └── DumpUnavailableError  the UI dump failed in a way a retry may cure (idle, null root)
    ├── UIParseError                a malformed or empty UI hierarchy dump
    ├── LLMError                    the model provider failed
    │   └── LLMOutputParseError     the reply did not match the schema (after the re-ask)
    ├── ActionError                 an action could not even be attempted
    │   ├── InvalidActionError      unknown action name or bad arguments
    │   ├── ElementNotFoundError    the control id is not in the observation
    │   └── StaleObservationError   the id belongs to an older observation
    ├── StateMachineError
    │   ├── IllegalTransitionError  the rulebook forbids the move
    │   └── UnknownStateError       no state is registered under that name
    ├── SimulatorError              the simulated phone or one of its app files is wrong
    ├── RecordingError              an action recording is malformed or cannot be replayed
    ├── ApkError                    an APK (zip, binary manifest, resource table) cannot be read
    └── RunWriteError               the run directory cannot be written (full disk, read-only)

Exceptions carry context attributes only; they never log or do I/O. Third-party errors are
wrapped once, at the boundary where they enter (driver, model client, config loader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class UfoMobileError(Exception):
    """Base of every error raised by ufo_mobile on purpose."""


class ConfigError(UfoMobileError):
    """A settings or task file is wrong. ``str()`` is one line naming the file, key path and line."""

    def __init__(self, message: str, *, path: str | None = None, key: str | None = None,
                 line: int | None = None) -> None:
        self.path = path
        self.key = key
        self.line = line
        self.message = message
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [self.path or ("" if self.key else "<config>")]
        if self.line is not None and self.path:
            parts[0] += f":{self.line}"
        if self.key:
            parts.append(self.key)
        return ": ".join([p for p in parts if p] + [self.message])


class DeviceError(UfoMobileError):
    """A device call failed. ``serial`` names the device."""

    def __init__(self, message: str, *, serial: str = "?") -> None:
        self.serial = serial
        self.detail = message  # the message without the serial
        super().__init__(f"[{serial}] {message}")


class DeviceDisconnectedError(DeviceError):
    """The device went away (transport closed, offline, unauthorized)."""


class DeviceTimeoutError(DeviceError):
    """A device call did not answer within its timeout."""


class DeviceCommandError(DeviceError):
    """A device command ran and reported failure."""


class DumpUnavailableError(DeviceCommandError):
    """``uiautomator dump`` gave no hierarchy this time: the screen never went idle (``idle``), the
    accessibility bridge returned no root (``null_root``), another UiAutomation holds the bridge
    (``conflict``), or something else (``other``). Waiting and trying again may cure it."""

    def __init__(self, message: str, *, serial: str = "?", kind: str = "other") -> None:
        self.kind = kind
        super().__init__(message, serial=serial)


class UIParseError(UfoMobileError):
    """A UI hierarchy dump is malformed, truncated or empty."""


class LLMError(UfoMobileError):
    """The model provider failed (transport, quota, exhausted script)."""


class LLMOutputParseError(LLMError):
    """The model's reply did not validate against the reply schema."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        self.raw = raw
        super().__init__(message)


class ActionError(UfoMobileError):
    """An action could not be attempted at all."""


class InvalidActionError(ActionError):
    """Unknown action name, unsupported by the device, or bad arguments."""


class ElementNotFoundError(ActionError):
    """The control id does not exist in the observation the action refers to."""


class StaleObservationError(ActionError):
    """The action refers to an observation that is no longer current."""


class StateMachineError(UfoMobileError):
    """The agent state machine was driven wrongly."""


class IllegalTransitionError(StateMachineError):
    """The rulebook has no such move from the current state."""

    def __init__(self, source: str, dest: str, *, machine: str = "") -> None:
        self.source = source
        self.dest = dest
        self.machine = machine
        super().__init__(f"{machine or 'machine'}: illegal transition {source} -> {dest}")


class UnknownStateError(StateMachineError):
    """No state class is registered under that name."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown state {name!r} (known: {', '.join(known)})")


class SimulatorError(UfoMobileError):
    """The simulated phone or an app definition is wrong."""


class RecordingError(UfoMobileError):
    """A recording file is malformed, or an action in it cannot be replayed."""


class ApkError(UfoMobileError):
    """An APK cannot be read: a broken or hostile zip, binary manifest or resource table, or a limit hit."""


class RunWriteError(UfoMobileError):
    """A file of the run directory could not be written. ``path`` names it, ``errno`` says why."""

    def __init__(self, message: str, *, path: str = "", errno: int | None = None) -> None:
        self.path = path
        self.errno = errno
        super().__init__(message)


def first_problem(exc: ValidationError) -> tuple[tuple[str, ...], str]:
    """The key path and message of the error to report: an unknown key first (a typo also makes a
    required key look missing), else the first error."""
    errors = exc.errors()
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    message = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
    return tuple(str(part) for part in error["loc"]), message.removeprefix("Value error, ")
