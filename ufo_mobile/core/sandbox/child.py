"""The program of the sandbox process. It runs in the child only; the runtime never calls it.

The parent starts it from source text (see ``process.py``), so it imports nothing but the standard
library and ``policy`` (which the bootstrap registered under its package name first).

Wiring: fd 1 is the parent's message pipe. ``main`` keeps a private copy of it and points fd 1 at
fd 2, so whatever the code prints, from Python or from C, lands in the output pipe and can never
corrupt a message. The job arrives as the first JSON line on stdin; tool replies follow it there.

Messages sent (one JSON object a line):

- ``{"call": name, "args": [...], "kwargs": {...}}``, answered by ``{"result": value}``,
  ``{"error": "why"}`` (raised in the code as ``ToolError``) or ``{"stop": true}`` (the code is
  ended: ``complete`` was called);
- ``{"done": true, "error": str | None, "value": str | None}``, the last message.

A script that exits on its own (``sys.exit``, ``os._exit``, a signal) sends no ``done``; the parent
reads its exit status instead.
"""

from __future__ import annotations

import ast
import builtins
import json
import linecache
import os
import resource
import sys
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO

from ufo_mobile.core.sandbox.policy import SAFE_BUILTINS, SAFE_EXCEPTIONS, check_code

CODE_FILE = "<code>"
SCRIPT_FILE = "<script>"
_ERROR_CHARS = 500
_MIB = 1024 * 1024


class ToolError(Exception):
    """A tool call failed; the message says why. The model's code may catch it."""


class _Stop(BaseException):
    """Ends the code when the runtime says stop; not an ``Exception``, so ``except Exception`` lets it by."""


class Channel:
    """The message pipe to the parent (a private copy of fd 1) and the reply pipe (stdin)."""

    def __init__(self, out: BinaryIO, replies: BinaryIO, max_bytes: int) -> None:
        self._out = out
        self._replies = replies
        self.max_bytes = max_bytes

    def send(self, message: dict[str, Any]) -> None:
        self._out.write(json.dumps(message, allow_nan=False).encode() + b"\n")
        self._out.flush()

    def receive(self) -> dict[str, Any]:
        """The next line from the parent; the parent going away ends the process."""
        line = self._replies.readline()
        if not line:
            raise SystemExit(1)
        message = json.loads(line)
        if not isinstance(message, dict):
            raise SystemExit(1)
        return message

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One tool call: send it, wait for the reply, return the result or raise."""
        try:
            line = json.dumps({"call": name, "args": list(args), "kwargs": kwargs}, allow_nan=False)
        except (TypeError, ValueError):
            raise TypeError(f"the arguments of {name}() must be JSON values "
                            "(str, int, float, bool, None, list, dict)") from None
        if len(line) >= self.max_bytes:
            raise ValueError(f"the arguments of {name}() are too large ({len(line)} bytes)")
        self._out.write(line.encode() + b"\n")
        self._out.flush()
        reply = self.receive()
        if reply.get("stop"):
            raise _Stop
        if "error" in reply:
            raise ToolError(str(reply["error"]))
        return reply.get("result")


def limit_resources(job: dict[str, Any]) -> None:
    """Address space, CPU seconds (SIGXCPU at the soft limit, SIGKILL a second later), file size and
    core dumps, as the job says; never above a hard limit the runtime itself was given."""
    memory = int(job["memory_mb"]) * _MIB
    cpu = int(job["cpu_seconds"])
    _lower(resource.RLIMIT_AS, memory, memory)
    _lower(resource.RLIMIT_CPU, cpu, cpu + 1)
    _lower(resource.RLIMIT_FSIZE, int(job["file_mb"]) * _MIB, int(job["file_mb"]) * _MIB)
    _lower(resource.RLIMIT_CORE, 0, 0)
    if job.get("max_processes"):  # in namespaces: counts this user namespace's processes, the child's tree
        _lower(resource.RLIMIT_NPROC, int(job["max_processes"]), int(job["max_processes"]))


def _lower(which: int, soft: int, hard: int) -> None:
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(which, (soft, hard))


def describe(exc: BaseException, filename: str) -> str:
    """``Type: message (line N)``, one bounded line; N is the deepest line of the code in the traceback."""
    text = " ".join(str(exc.msg if isinstance(exc, SyntaxError) else exc).split())
    line = exc.lineno if isinstance(exc, SyntaxError) else None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f" (line {line})" if line else ""
    described = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return described[:_ERROR_CHARS] + where


def _tool_stub(channel: Channel, name: str) -> Callable[..., Any]:
    def stub(*args: Any, **kwargs: Any) -> Any:
        return channel.call(name, args, kwargs)

    stub.__name__ = stub.__qualname__ = name
    return stub


def codeact_namespace(channel: Channel, tools: list[str]) -> dict[str, Any]:
    """The globals of CodeAct code: the safe builtins, the exceptions and one stub per tool."""
    allowed = {name: getattr(builtins, name) for name in SAFE_BUILTINS + SAFE_EXCEPTIONS}
    allowed["ToolError"] = ToolError
    namespace: dict[str, Any] = {"__builtins__": allowed, "__name__": "__sandbox__"}
    namespace.update((name, _tool_stub(channel, name)) for name in tools)
    return namespace


def run_codeact(job: dict[str, Any], channel: Channel) -> dict[str, Any]:
    """Check the code again, run it among the stubs; the ``done`` message."""
    code, tools = str(job["code"]), [str(name) for name in job["tools"]]
    refused = check_code(code, tools=tools, max_chars=int(job["max_code_chars"]))
    if refused is not None:
        return {"done": True, "error": f"refused: {refused}", "value": None}
    namespace = codeact_namespace(channel, tools)
    reserve = bytearray(_MIB)  # given back on MemoryError, so the report itself has room
    error = None
    try:
        exec(compile(code, CODE_FILE, "exec"), namespace)
    except _Stop:
        pass
    except MemoryError:
        del reserve
        namespace.clear()
        error = f"MemoryError: the memory limit of {job['memory_mb']} MiB was reached"
    except Exception as exc:
        error = describe(exc, CODE_FILE)
    return {"done": True, "error": error, "value": None}


def run_script(job: dict[str, Any]) -> dict[str, Any]:
    """Run the script as ``__main__``; the value of a last bare expression is the result."""
    code = str(job["code"])
    linecache.cache[SCRIPT_FILE] = (len(code), None, code.splitlines(True), SCRIPT_FILE)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    reserve = bytearray(_MIB)
    value: Any = None
    try:
        tree = ast.parse(code, SCRIPT_FILE)
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body.pop()
        exec(compile(tree, SCRIPT_FILE, "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), SCRIPT_FILE, "eval"), namespace)
    except MemoryError:
        del reserve
        namespace.clear()
        return {"done": True, "error": f"MemoryError: the memory limit of {job['memory_mb']} MiB was reached",
                "value": None}
    except Exception as exc:
        _print_traceback(exc)
        return {"done": True, "error": describe(exc, SCRIPT_FILE), "value": None}
    return {"done": True, "error": None, "value": _bounded_repr(value, int(job["max_value_chars"]))}


def _print_traceback(exc: BaseException) -> None:
    """The traceback as Python prints it, from the script's first frame on (not this module's)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != SCRIPT_FILE:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)  # a SyntaxError has no frame of the script: no stack
    sys.stderr.flush()


def _bounded_repr(value: Any, limit: int) -> str | None:
    if value is None:
        return None
    try:
        text = repr(value)
    except Exception as exc:
        return f"<repr failed: {describe(exc, SCRIPT_FILE)}>"
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def main() -> None:
    """Take the message pipe, read the job, apply the limits, run the code, report ``done``."""
    out = os.fdopen(os.dup(1), "wb")  # os.dup: not inherited by programs a script starts
    os.dup2(2, 1)
    os.environ.pop("PWD", None)  # bubblewrap sets it; the environment is the runtime's clean one, nothing more
    job = json.loads(sys.stdin.buffer.readline())
    channel = Channel(out, sys.stdin.buffer, int(job["max_message_bytes"]))
    limit_resources(job)
    done = run_codeact(job, channel) if job["mode"] == "codeact" else run_script(job)
    sys.stdout.flush()
    sys.stderr.flush()
    channel.send(done)
