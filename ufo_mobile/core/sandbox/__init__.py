"""Model-written Python, run in a separate process with a clean environment and hard limits.

Two users, both sub-agents:

- CodeAct: the model writes short Python that calls the tools (``click(5)``, ``type("hi", 3)``,
  ``complete(True, "done")``). ``policy.check_code`` refuses anything beyond a small subset first;
  the code then runs in a child process where each tool is a stub that asks this process over a
  pipe (``run_codeact``).
- Scripter: ordinary Python off the device, such as a call to an HTTP API (``run_script``).

Modules: ``policy`` (the static check), ``child`` (the program of the sandbox process),
``process`` (starting, watching and killing it), ``bridge`` (the message loop and tool calls),
``limits``, ``result``, ``output``, ``errors``, and ``run`` (the two entry points).
"""

from ufo_mobile.core.sandbox.bridge import Stop, ToolCaller
from ufo_mobile.core.sandbox.errors import SandboxError, ToolError
from ufo_mobile.core.sandbox.limits import SandboxLimits
from ufo_mobile.core.sandbox.policy import check_code
from ufo_mobile.core.sandbox.result import CodeRun, ToolCall
from ufo_mobile.core.sandbox.run import run_codeact, run_script

__all__ = [
    "CodeRun",
    "SandboxError",
    "SandboxLimits",
    "Stop",
    "ToolCall",
    "ToolCaller",
    "ToolError",
    "check_code",
    "run_codeact",
    "run_script",
]
