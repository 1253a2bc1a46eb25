"""``DeviceShell``: runs scripts of ``shparse`` against the emulated device, like ``/system/bin/sh``.

Words are expanded only for ``$?``, ``$$``, ``$NAME`` / ``${NAME}`` (no field splitting, no globs,
no command substitution), then looked up in a fixed table of commands implemented in Python. An
unknown command prints ``/system/bin/sh: X: inaccessible or not found`` and returns 127. Nothing
ever reaches a host process.
"""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import Awaitable, Callable, Mapping

from ufo_mobile.errors import DeviceError, SimulatorError
from ufo_mobile.sim.android.commands import am as devcmds_am
from ufo_mobile.sim.android.commands import basic as devcmds_basic
from ufo_mobile.sim.android.commands import dumpsys as devcmds_dumpsys
from ufo_mobile.sim.android.commands import input as devcmds_input
from ufo_mobile.sim.android.commands import pm as devcmds_pm
from ufo_mobile.sim.android.commands import system as devcmds_system
from ufo_mobile.sim.android.commands import tools as devcmds_tools
from ufo_mobile.sim.android.devfs import FsError
from ufo_mobile.sim.android.devstate import DeviceState
from ufo_mobile.sim.android.shio import BufferSink, BytesSource, Command, Ctx, ExitShell, NullSink, ShellIO, Sink
from ufo_mobile.sim.android.shparse import AndOr, Lit, Redirect, ShellSyntaxError, Word, parse
from ufo_mobile.sim.android.shparse import Command as SimpleCommand

SH = "/system/bin/sh"
_BIN_DIRS = ("/system/bin/", "/system/xbin/", "/vendor/bin/", "/bin/", "/sbin/", "/product/bin/")
SHELL_PID = devcmds_tools.SHELL_PID


def builtin_commands() -> dict[str, Command]:
    """Every command the device shell knows, by name."""
    table: dict[str, Command] = {}
    for module in (devcmds_basic, devcmds_input, devcmds_am, devcmds_pm, devcmds_system, devcmds_dumpsys,
                   devcmds_tools):
        table.update(module.COMMANDS)
    table["sh"] = _sh
    return table


async def _sh(ctx: Ctx, args: list[str]) -> int:
    """``sh -c SCRIPT``: the script runs in a fresh shell of the same device (still no host)."""
    if len(args) >= 2 and args[0] == "-c":
        return await DeviceShell(ctx.device).run(args[1], ctx.io)
    if not args:
        script = (await ctx.read_all(1024 * 1024)).decode("utf-8", "replace")
        return await DeviceShell(ctx.device).run(script, ctx.io)
    return await ctx.fail(f"{args[0]}: can't open script files", 127)


class DeviceShell:
    """One shell process: its variables and last status live as long as the object."""

    def __init__(self, device: DeviceState, commands: Mapping[str, Command] | None = None) -> None:
        self.device = device
        self.commands = dict(builtin_commands() if commands is None else commands)
        self.vars: dict[str, str] = {"PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin:"
                                              "/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin",
                                     "HOME": "/", "USER": "shell", "HOSTNAME": "ufo_sim"}
        self.status = 0

    async def run(self, script: str, io: ShellIO) -> int:
        """Run ``script``; returns its exit status (``exit N``, or the last command's)."""
        if self.device.faults.hangs(script):
            await asyncio.sleep(self.device.limits.hang_timeout)  # until the stream closes (cancelled)
            return 124
        try:
            program = parse(script)
        except ShellSyntaxError as exc:
            await io.stderr.write(f"{SH}: syntax error: {exc}\n".encode())
            self.status = 1
            return 1
        try:
            for item in program:
                await self._and_or(item, io)
        except ExitShell as exc:
            self.status = exc.code & 0xFF
        return self.status

    async def _and_or(self, item: AndOr, io: ShellIO) -> None:
        self.status = await self._pipeline(item.first, io)
        for op, pipeline in item.rest:
            if (op == "&&") == (self.status == 0):
                self.status = await self._pipeline(pipeline, io)

    async def _pipeline(self, commands: list[SimpleCommand], io: ShellIO) -> int:
        stdin = io.stdin
        status = 0
        for index, command in enumerate(commands):
            last = index == len(commands) - 1
            sink: Sink = io.stdout if last else BufferSink()
            status = await self._command(command, ShellIO(sink, io.stderr, stdin))
            if isinstance(sink, BufferSink):
                stdin = BytesSource(bytes(sink.data))
        return status

    # -- expansion ---------------------------------------------------------------------------------

    def _value(self, name: str) -> str:
        if name == "?":
            return str(self.status)
        if name == "$":
            return str(SHELL_PID)
        if name == "0":
            return SH
        if name == "#":
            return "0"
        return self.vars.get(name, "")

    def expand(self, word: Word) -> str | None:
        """The word's text; None for a word made only of unquoted, empty expansions."""
        text = "".join(part.text if isinstance(part, Lit) else self._value(part.name) for part in word.parts)
        if text or any(part.quoted or (isinstance(part, Lit) and part.text) for part in word.parts):
            return text
        return None

    # -- simple commands ---------------------------------------------------------------------------

    async def _command(self, command: SimpleCommand, io: ShellIO) -> int:
        assigns = {name: self.expand(value) or "" for name, value in command.assigns}
        argv = [text for word in command.words if (text := self.expand(word)) is not None]
        redirected = await self._redirect(command.redirects, io)
        if redirected is None:
            return 1
        io, finish = redirected
        if not argv:
            self.vars.update(assigns)
            await finish()
            return 0
        try:
            status = await self._exec(argv, assigns, io)
        finally:
            await finish()
        self.status = status
        return status

    async def _exec(self, argv: list[str], env: dict[str, str], io: ShellIO) -> int:
        name = _command_name(argv[0])
        ctx = Ctx(self.device, io, name, {**self.vars, **env}, self)
        if self.device.faults.hangs(" ".join(argv)):
            await asyncio.sleep(self.device.limits.hang_timeout)  # until the stream closes (cancelled)
            return 124
        func = self.commands.get(name)
        if func is None:
            await io.stderr.write(f"{SH}: {argv[0]}: inaccessible or not found\n".encode())
            return 127
        try:
            return await func(ctx, argv[1:])
        except FsError as exc:
            return await ctx.fail(f"{exc.path}: {exc.reason}")
        except (DeviceError, SimulatorError) as exc:
            return await ctx.fail(str(exc), 255)
        except (ExitShell, ConnectionError):  # exit, or the stream went away
            raise
        except Exception as exc:  # a bug in a command reads like a crashed Android command, not a dead stream
            await io.stderr.write(f"Exception occurred while executing '{name}':\n{exc!r}\n".encode())
            return 255

    async def _redirect(self, redirects: list[Redirect], io: ShellIO
                        ) -> tuple[ShellIO, Callable[[], Awaitable[None]]] | None:
        """The command's streams after its redirections, and a coroutine that saves captured files."""
        fds: dict[int, Sink] = {1: io.stdout, 2: io.stderr}
        stdin = io.stdin
        files: list[tuple[str, BufferSink, bool]] = []
        fs = self.device.fs
        for item in redirects:
            target = self.expand(item.target) or ""
            if item.op in (">&", "<&"):
                if target not in ("1", "2") or item.fd not in (1, 2):
                    await io.stderr.write(f"{SH}: {target}: bad file descriptor\n".encode())
                    return None
                fds[item.fd] = fds[int(target)]
            elif item.op == "<":
                if target == "/dev/null":
                    stdin = BytesSource()
                    continue
                try:
                    stdin = BytesSource(fs.read(target))
                except FsError as exc:
                    await io.stderr.write(f"{SH}: can't open {target}: {exc.reason}\n".encode())
                    return None
            elif target in ("/dev/null", "/dev/tty") or item.fd not in (1, 2):
                fds[item.fd] = NullSink() if target == "/dev/null" else io.stdout
            else:
                parent = fs.stat(posixpath.dirname(fs.normalize(target)))
                if parent is None or not parent.is_dir:
                    await io.stderr.write(f"{SH}: can't create {target}: No such file or directory\n".encode())
                    return None
                buffer = BufferSink()
                files.append((target, buffer, item.op == ">>"))
                fds[item.fd] = buffer

        async def finish() -> None:
            for path, buffer, append in files:
                try:
                    fs.write(path, bytes(buffer.data), append=append)
                except FsError as exc:
                    await io.stderr.write(f"{SH}: can't create {path}: {exc.reason}\n".encode())

        return ShellIO(fds[1], fds[2], stdin), finish


def _command_name(word: str) -> str:
    for prefix in _BIN_DIRS:
        if word.startswith(prefix) and "/" not in word[len(prefix):]:
            return word[len(prefix):]
    return word
