"""The parent's side of a run: read the child's messages, serve its tool calls, enforce the budgets.

A tool call is answered by awaiting the caller's ``ToolCaller``. What it returns (a JSON value) is
the stub's return value in the code; a ``ToolError`` it raises is raised in the code; a ``Stop`` it
returns ends the code after that call (``complete``). Anything else it raises is a bug of the caller
and propagates (the process is killed on the way out).

Budgets: the code's wall-clock time (``wall_seconds``) runs only while no tool call is being served;
each call has ``tool_seconds``; the calls are counted, and the one past ``max_tool_calls`` ends the
run. The child is untrusted: a call of a tool it was not given, malformed arguments or an unknown
message end the run with a protocol error.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from ufo_mobile.core.sandbox.errors import ProtocolError, ToolError
from ufo_mobile.core.sandbox.limits import SandboxLimits
from ufo_mobile.core.sandbox.process import MAX_MESSAGE_BYTES, SandboxProcess
from ufo_mobile.core.sandbox.result import ToolCall
from ufo_mobile.safe_text import cut_to

ToolCaller = Callable[[str, list[Any], dict[str, Any]], Awaitable[Any]]
"""``await call_tool(name, args, kwargs)``: a JSON value, or ``Stop``; ``ToolError`` for a failure."""

_TEXT_CHARS = 2000


@dataclass(frozen=True)
class Stop:
    """What a ``ToolCaller`` returns to end the code after this call; ``result`` is recorded."""

    result: Any = None


@dataclass
class Outcome:
    """What the conversation learned; ``run.py`` turns it into a ``CodeRun``."""

    error: str | None = None
    timed_out: bool = False
    stopped: bool = False
    value: str | None = None
    calls: list[ToolCall] = field(default_factory=list)


class _Expired(Exception):
    """The code's wall-clock budget ran out while waiting for the child (never the caller's own timeout)."""


class _End(Exception):
    """Ends the conversation early with ``error`` (too many tool calls)."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


class _CodeClock:
    """The code's wall-clock budget, paused while a tool call is served."""

    def __init__(self, seconds: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._left = seconds
        self._since: float | None = self._loop.time()

    def remaining(self) -> float:
        if self._since is None:
            return self._left
        return self._left - (self._loop.time() - self._since)

    def pause(self) -> None:
        self._left = self.remaining()
        self._since = None

    def resume(self) -> None:
        self._since = self._loop.time()


class Conversation:
    """One run's exchange with its sandbox process, from the job to ``done`` (or the end of the child)."""

    def __init__(self, process: SandboxProcess, limits: SandboxLimits, *, tools: Collection[str] = (),
                 call_tool: ToolCaller | None = None) -> None:
        self._process = process
        self._limits = limits
        self._tools = frozenset(tools)
        self._call_tool = call_tool
        self._outcome = Outcome()

    async def run(self, job: dict[str, Any], *, close_input: bool) -> Outcome:
        """Send ``job``, then serve messages until the result; ``close_input`` when no reply will follow."""
        clock = _CodeClock(self._limits.wall_seconds)
        try:
            await self._send(job, clock)
            if close_input:
                self._process.close_stdin()
            await self._serve(clock)
        except _Expired:
            if not self._outcome.stopped:  # after a stop, the code's lingering is no error
                self._outcome.timed_out = True
                limit = self._limits.wall_seconds
                self._outcome.error = f"the code ran longer than the wall-clock limit of {limit:g} s"
        except ProtocolError as exc:
            self._outcome.error = str(exc)
        except _End as end:
            self._outcome.error = end.error
        return self._outcome

    async def _serve(self, clock: _CodeClock) -> None:
        while True:
            try:
                message = await self._process.receive(clock.remaining())
            except TimeoutError:
                raise _Expired from None
            if message is None:
                await self._child_ended(clock)
                return
            if message.get("done") is True:
                self._finished(message)
                return
            if "call" not in message:
                raise ProtocolError(f"the sandbox sent an unknown message (keys: {sorted(message)[:5]})")
            if self._outcome.stopped:
                return  # the code went on calling tools after a stop: it is simply ended
            clock.pause()
            reply = await self._call(message)
            clock.resume()
            await self._send(reply, clock)  # a child gone is seen at the next receive

    async def _send(self, message: dict[str, Any], clock: _CodeClock) -> None:
        try:
            await self._process.send(message, clock.remaining())
        except TimeoutError:
            raise _Expired from None

    def _finished(self, message: dict[str, Any]) -> None:
        if not self._outcome.stopped:  # after a stop, nothing the code does counts
            self._outcome.error = _text(message.get("error"))
        self._outcome.value = _text(message.get("value"), self._limits.max_output_chars)

    async def _child_ended(self, clock: _CodeClock) -> None:
        """The child closed its message pipe without ``done``: read its exit status."""
        status = await self._process.exit_status(clock.remaining())
        if status is None:
            raise _Expired
        if self._outcome.stopped or status == 0:
            return
        if status == -signal.SIGXCPU:
            self._outcome.error = f"the code used more than the CPU time limit of {self._limits.cpu_seconds} s"
        elif status < 0:
            name = signal.Signals(-status).name if -status in signal.valid_signals() else str(-status)
            hint = " (out of memory?)" if status == -signal.SIGKILL and not self._process.killed else ""
            self._outcome.error = f"the sandbox process was killed by {name}{hint}"
        else:
            self._outcome.error = f"the sandbox process exited with status {status}"

    async def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        """Serve one tool call; the reply for the child."""
        name, args, kwargs = _parse_call(message, self._tools)
        calls, call_tool = self._outcome.calls, self._call_tool
        if call_tool is None:
            raise ProtocolError("the sandbox called a tool in a run without tools")
        if len(calls) >= self._limits.max_tool_calls:
            raise _End(f"too many tool calls: the limit is {self._limits.max_tool_calls}")
        seconds = self._limits.tool_seconds
        try:
            async with asyncio.timeout(seconds) as deadline:
                result = await call_tool(name, list(args), dict(kwargs))
        except ToolError as exc:
            calls.append(ToolCall(name, args, kwargs, error=str(exc)))
            return {"error": str(exc)}
        except TimeoutError:
            if not deadline.expired():
                raise
            error = f"{name}() took longer than {seconds:g} s"
            calls.append(ToolCall(name, args, kwargs, error=error))
            return {"error": error}
        if isinstance(result, Stop):
            calls.append(ToolCall(name, args, kwargs, result=result.result, stopped=True))
            self._outcome.stopped = True
            return {"stop": True}
        _check_json(name, result)
        calls.append(ToolCall(name, args, kwargs, result=result))
        return {"result": result}


def _parse_call(message: dict[str, Any], tools: frozenset[str]) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    name, args, kwargs = message.get("call"), message.get("args", []), message.get("kwargs", {})
    if not isinstance(name, str) or name not in tools:
        raise ProtocolError(f"the sandbox called a tool it was not given: {_text(name, 80)}")
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise ProtocolError(f"the sandbox sent malformed arguments for {name}()")
    return name, tuple(args), kwargs


def _check_json(name: str, result: Any) -> None:
    """A tool's result must be a JSON value that fits a message (a caller bug otherwise)."""
    try:
        size = len(json.dumps(result, ensure_ascii=False, allow_nan=False).encode())
    except (TypeError, ValueError) as exc:
        raise TypeError(f"the result of tool {name!r} is not a JSON value: {exc}") from exc
    if size >= MAX_MESSAGE_BYTES - 64:
        raise ValueError(f"the result of tool {name!r} is too large for the sandbox ({size} bytes)")


def _text(value: Any, limit: int = _TEXT_CHARS) -> str | None:
    """A string from the child, bounded; None stays None."""
    if value is None:
        return None
    text = value if isinstance(value, str) else repr(value)
    return cut_to(text, limit)
