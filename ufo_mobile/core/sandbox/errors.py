"""The sandbox's errors, in the project's one exception tree."""

from __future__ import annotations

from ufo_mobile.errors import UfoMobileError


class SandboxError(UfoMobileError):
    """The sandbox process could not be started (no interpreter, no ``resource`` module, no fork)."""


class ToolError(UfoMobileError):
    """Raised by a ``ToolCaller`` for an expected failure: the message is raised in the model's code
    as its ``ToolError``, which the code may catch. Any other exception from the caller is a bug
    and propagates out of ``run_codeact`` (after the sandbox process is killed)."""


class ProtocolError(UfoMobileError):
    """The sandbox process sent something that is not a message: the run ends with this as its error."""
