"""The sandbox process: started clean, watched, and always killed and reaped.

Start. ``sys.executable -I`` (isolated: no ``PYTHON*`` variables, no user site, nothing of the
current directory on ``sys.path``), with ``-S`` too when the code needs no installed packages
(CodeAct), ``-u`` (every print reaches the pipe at once, so a killed run keeps its output) and
``-X utf8``. The program is a bootstrap given with ``-c``; the source text of ``policy.py`` and
``child.py`` follows as arguments and the bootstrap executes it as those modules. So the child needs
nothing on its import path: it works the same from the repository and from an installed package.

Isolation. The environment is rebuilt, not inherited: ``PATH``, a UTF-8 locale, and ``HOME`` and
``TMPDIR`` pointing at a fresh temporary directory that is also the working directory and is removed
afterwards. No API key or other variable of the runtime reaches the code. Only the three pipes are
open in the child. Memory, CPU time and file size are limited by the child itself (``setrlimit``,
before it reads the code); wall-clock time is the parent's to enforce.

Pipes. stdin carries the job and then the tool replies; stdout carries the child's messages, one
JSON object a line; stderr carries everything the code prints, drained all the time into a
``BoundedOutput`` so the child never blocks on a full pipe.

End. The child leads a session of its own, and ``close`` SIGKILLs its whole process group (what the
code forked goes too), then reaps it. Every wait is bounded, by the caller or by ``GRACE_SECONDS``.
What the child sends is untrusted: one message is at most ``MAX_MESSAGE_BYTES``; anything that is
not a JSON object is a ``ProtocolError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.resources
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from typing import Any

from ufo_mobile.core.sandbox.cgroup import TreeGroup
from ufo_mobile.core.sandbox.errors import ProtocolError, SandboxError
from ufo_mobile.core.sandbox.isolation import ISOLATED, Confinement, command, namespace_problem
from ufo_mobile.core.sandbox.output import BoundedOutput

GRACE_SECONDS = 5.0
"""How long a dead or killed child's pipes may take to drain, and the kill to be reaped."""
MAX_MESSAGE_BYTES = 1024 * 1024
"""Longest message line either side sends (tool arguments and results are JSON within it)."""

_CHUNK = 64 * 1024
_REAL_PYTHON = os.path.realpath(sys.executable) if sys.executable else ""
_BOOT = """\
import sys, types
def load(name, source):
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, name, "exec"), module.__dict__)
    return module
policy, child = sys.argv[1:3]
del sys.argv[1:]
load("ufo_mobile.core.sandbox.policy", policy)
load("ufo_mobile.core.sandbox.child", child).main()
"""


@functools.cache
def child_sources() -> tuple[str, str]:
    """The source text of ``policy.py`` and ``child.py``, read once from the package."""
    package = importlib.resources.files(__package__ or "ufo_mobile.core.sandbox")
    try:
        return ((package / "policy.py").read_text(encoding="utf-8"),
                (package / "child.py").read_text(encoding="utf-8"))
    except OSError as exc:
        raise SandboxError(f"the sandbox program cannot be read: {exc}") from exc


def clean_environment(home: str) -> dict[str, str]:
    """The child's whole environment: nothing of the runtime's but ``PATH``."""
    return {"PATH": os.environ.get("PATH") or os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "HOME": home, "TMPDIR": home}


class SandboxProcess:
    """One running sandbox child; use ``sandbox_process()``, which always closes it."""

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: asyncio.subprocess.SubprocessStreamProtocol,
                 workdir: str, output_limit: int, *, wrapped: bool = False, group: TreeGroup | None = None) -> None:
        proc = asyncio.subprocess.Process(transport, protocol, asyncio.get_running_loop())
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._transport = transport
        self._proc = proc
        self._stdin = proc.stdin
        self._stdout = proc.stdout
        self.workdir = workdir
        self.wrapped = wrapped
        self.group = group
        """The control group bounding the child's whole tree, where one could be made."""
        """The child runs under bubblewrap, which exits with 128 + N when the child was killed by signal N."""
        self.killed = False
        """``kill()`` was called while the child still ran."""
        self.output = BoundedOutput(output_limit)
        self._exited = asyncio.ensure_future(proc.wait())
        self._draining = asyncio.ensure_future(self._drain(proc.stderr))
        self._reading: asyncio.Future[bytes] | None = None

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The child's exit status, negative for a signal (as ``subprocess`` has it), under bubblewrap too."""
        code = self._proc.returncode
        if self.wrapped and code is not None and code > 128 and code - 128 in signal.valid_signals():
            return -(code - 128)
        return code

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            self.output.add(chunk)

    async def send(self, message: dict[str, Any], within: float) -> bool:
        """Write one message line; False when the child no longer reads. TimeoutError if it stalls."""
        data = json.dumps(message, ensure_ascii=False, allow_nan=False).encode() + b"\n"
        try:
            self._stdin.write(data)
            async with asyncio.timeout(max(within, 0)):
                await self._stdin.drain()
        except ConnectionError:
            return False
        return True

    def close_stdin(self) -> None:
        """No more messages: the child reads the end of its input."""
        self._stdin.close()

    async def receive(self, within: float) -> dict[str, Any] | None:
        """The next message; None once the child has closed its end; TimeoutError after ``within`` s."""
        line = await self._next_line(within)
        if not line:
            return None
        try:
            message = json.loads(line)
        except ValueError:  # not UTF-8, or not JSON
            raise ProtocolError(f"the sandbox sent a line that is not JSON ({len(line)} bytes)") from None
        if not isinstance(message, dict):
            raise ProtocolError("the sandbox sent a message that is not a JSON object")
        return message

    async def _next_line(self, within: float) -> bytes:
        if self._reading is None:  # a read that timed out is resumed, never lost
            self._reading = asyncio.ensure_future(self._stdout.readline())
        reading = self._reading
        either: set[asyncio.Future[Any]] = {reading, self._exited}
        done, _ = await asyncio.wait(either, timeout=max(within, 0), return_when=asyncio.FIRST_COMPLETED)
        if reading not in done and self._exited in done:
            self.kill()  # what it forked must not hold the pipe open; what it wrote is in the pipe
            done, _ = await asyncio.wait(either - {self._exited}, timeout=GRACE_SECONDS)
        if reading not in done:
            if self._exited.done():
                return b""  # something outside its process group holds the pipe: as good as closed
            raise TimeoutError
        self._reading = None
        try:
            return reading.result()
        except ValueError:  # longer than MAX_MESSAGE_BYTES
            raise ProtocolError(f"the sandbox sent a message over {MAX_MESSAGE_BYTES} bytes") from None

    async def exit_status(self, within: float) -> int | None:
        """The exit status once the child has ended within ``within`` s, else None."""
        await asyncio.wait({self._exited}, timeout=max(within, 0))
        return self.returncode if self._exited.done() else None

    def kill(self) -> None:
        """SIGKILL the child's process group (the child and whatever it forked).

        After the child is reaped its pid stays reserved as long as its group has a member, so the
        signal can only reach processes of this run, or none.
        """
        if self._proc.returncode is None:
            self.killed = True  # its end is ours (not the kernel's, say for memory)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)

    async def close(self) -> None:
        """Kill, reap, let the output drain (each bounded), close the pipes, remove the working directory."""
        try:
            self.kill()
            await asyncio.wait({self._exited}, timeout=GRACE_SECONDS)
            self._stdin.close()
            await asyncio.wait({self._draining}, timeout=GRACE_SECONDS)
        finally:
            for task in (self._reading, self._draining, self._exited):
                _settle(task)
            self._transport.close()  # the pipes too, even if a process that left the group holds them
            shutil.rmtree(self.workdir, ignore_errors=True)
            if self.group is not None:
                self.group.remove()


def _settle(task: asyncio.Future[Any] | None) -> None:
    """Cancel a task still running; mark the error of one that failed as seen (no warning at exit)."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()


async def start(*, site: bool, output_limit: int, confinement: Confinement = ISOLATED,
                tree: tuple[int, int] | None = None) -> SandboxProcess:
    """Start a sandbox child; ``site`` makes installed packages importable (scripts); ``confinement``:
    in namespaces (``isolation.py``), or a plain process; ``tree``: (bytes, processes) for the whole
    tree, in a control group of its own where one can be made (``cgroup.py``)."""
    if not hasattr(os, "killpg"):
        raise SandboxError("the sandbox needs a POSIX system (process groups and resource limits)")
    if not sys.executable:
        raise SandboxError("no Python interpreter to start the sandbox with (sys.executable is empty)")
    policy, child = child_sources()
    flags = ["-I", "-u", "-X", "utf8"] + ([] if site else ["-S"])
    # without installed packages the installation's own interpreter will do (a virtual environment's
    # folder is not in the child's file system then)
    python = sys.executable if site else _REAL_PYTHON
    if confinement.isolation == "namespaces":
        await asyncio.to_thread(namespace_problem)  # the probe runs once per process, off the event loop
    loop = asyncio.get_running_loop()
    workdir = tempfile.mkdtemp(prefix="ufo-sandbox-")
    try:
        program = command([python, *flags, "-c", _BOOT, policy, child], workdir, confinement, site=site)
    except SandboxError:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    group = TreeGroup.make(*tree) if tree is not None else None
    try:  # loop.subprocess_exec rather than create_subprocess_exec: close() needs the transport
        transport, protocol = await loop.subprocess_exec(
            lambda: asyncio.subprocess.SubprocessStreamProtocol(limit=MAX_MESSAGE_BYTES, loop=loop),
            *program,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=clean_environment(workdir), cwd=workdir, start_new_session=True,
            preexec_fn=group.joiner() if group is not None else None)
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(workdir, ignore_errors=True)
        if group is not None:
            group.remove()
        raise SandboxError(f"the sandbox process did not start: {exc}") from exc
    return SandboxProcess(transport, protocol, workdir, output_limit, wrapped=program[0] != python, group=group)


@contextlib.asynccontextmanager
async def sandbox_process(*, site: bool, output_limit: int, confinement: Confinement = ISOLATED,
                          tree: tuple[int, int] | None = None) -> AsyncIterator[SandboxProcess]:
    """A started sandbox child, killed, reaped and cleaned up on the way out, whatever happened."""
    process = await start(site=site, output_limit=output_limit, confinement=confinement, tree=tree)
    try:
        yield process
    finally:
        await process.close()
