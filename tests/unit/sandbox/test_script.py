"""Scripts run in a real sandbox process: clean environment, exit statuses, limits, hostile children."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import alive
from ufo_mobile.core.sandbox import CodeRun, SandboxLimits, run_script
from ufo_mobile.core.sandbox import process as process_module
from ufo_mobile.core.sandbox.isolation import ISOLATED, Confinement, namespace_problem

LIMITS = SandboxLimits(wall_seconds=60)  # generous: these tests are not about time
HANG_GUARD = 120

# A script that finds the message pipe the way hostile code would: by trying every descriptor.
EVERY_FD = "import os\nfor fd in range(3, 64):\n    try:\n        {action}\n    except OSError:\n        pass\n"


MODE = [ISOLATED]  # the confinement of the test running (the fixture below sets it)


@pytest.fixture(autouse=True, params=["namespaces", "process"])
def confinement(request: pytest.FixtureRequest) -> Iterator[Confinement]:
    """Every script test runs in both modes; in namespaces only where this machine can make them."""
    if request.param == "namespaces" and namespace_problem() is not None:
        pytest.skip(f"no namespaces on this machine: {namespace_problem()}")
    MODE[0] = Confinement(request.param)
    yield MODE[0]
    MODE[0] = ISOLATED


async def run(code: str, limits: SandboxLimits = LIMITS) -> CodeRun:
    async with asyncio.timeout(HANG_GUARD):
        return await run_script(code, limits, MODE[0])


async def test_the_parents_secrets_do_not_reach_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    result = await run("import os\nprint(dict(os.environ))\nsorted(os.environ)")
    assert result.ok, result
    assert "sk-test-secret" not in result.output and "OPENAI_API_KEY" not in result.output
    assert result.value == "['HOME', 'LANG', 'LC_ALL', 'PATH', 'TMPDIR']"


async def test_the_script_runs_in_a_fresh_directory_of_its_own() -> None:
    result = await run("import os\nopen('note.txt', 'w').write('x')\nsorted(os.listdir('.')), os.getcwd()")
    assert result.ok, result
    assert result.value is not None and result.value.startswith("(['note.txt'], '")
    assert os.getcwd() not in result.value and "ufo-sandbox-" in result.value


async def test_imports_work_and_the_last_expression_is_the_value() -> None:
    result = await run("import json\nprint(json.dumps({'a': [1, 2]}))\n{'n': 6 * 7}")
    assert result.ok
    assert (result.output, result.value) == ('{"a": [1, 2]}\n', "{'n': 42}")
    assert result.render() == 'Output:\n{"a": [1, 2]}\n\nValue: {\'n\': 42}'


async def test_an_exception_gives_its_traceback_in_the_output_and_one_line_as_the_error() -> None:
    result = await run("x = 1\nraise ValueError('bad\\nvalue')\n")
    assert result.error == "ValueError: bad value (line 2)"
    assert result.output.startswith('Traceback (most recent call last):\n  File "<script>", line 2, in <module>\n')
    assert "ufo_mobile" not in result.output


@pytest.mark.parametrize(("code", "error"), [
    ("import sys\nprint('bye')\nsys.exit(3)", "the sandbox process exited with status 3"),
    ("import os\nos._exit(4)", "the sandbox process exited with status 4"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "the sandbox process was killed by SIGSEGV"),
    ("import sys\nsys.exit(0)", None),
])
async def test_the_exit_status_of_a_script_that_exits(code: str, error: str | None) -> None:
    result = await run(code)
    assert result.error == error
    assert result.ok is (error is None)


async def test_a_syntax_error_is_the_error() -> None:
    result = await run("x = (1,\n")
    assert result.error is not None and result.error.startswith("SyntaxError: '(' was never closed (line 1)")


async def test_code_over_the_size_limit_is_refused() -> None:
    result = await run("x = 1\n" * 10, SandboxLimits(max_code_chars=20))
    assert result.refused == "the code has 60 characters; the limit is 20"


async def test_a_script_that_sleeps_is_stopped_by_the_wall_clock_limit() -> None:
    result = await run("import time\nprint('start', flush=True)\ntime.sleep(1000)", SandboxLimits(wall_seconds=1))
    assert result.timed_out and result.output == "start\n"


async def test_a_busy_script_is_stopped_by_the_cpu_limit() -> None:
    result = await run("while True:\n    pass\n", SandboxLimits(wall_seconds=60, cpu_seconds=1))
    assert result.error == "the code used more than the CPU time limit of 1 s"


async def test_a_flood_on_stdout_and_stderr_is_bounded_and_decoded_leniently() -> None:
    result = await run("import os, sys\nos.write(1, b'\\xff\\xfe start ')\nsys.stdout.write('x' * 5_000_000)\n"
                       "sys.stderr.write('y' * 5_000_000 + ' end')",
                       SandboxLimits(wall_seconds=60, max_output_chars=100))
    assert result.ok
    assert result.output.startswith("\ufffd\ufffd start xxx") and result.output.endswith("yyy end")
    assert "bytes left out" in result.output and len(result.output) < 200


def with_marker(marker: str) -> list[int]:
    """The pids of this machine's processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("escape", ["", "    os.setsid()\n    if os.fork():\n        os._exit(0)\n"])
async def test_processes_the_script_starts_are_killed_with_it(escape: str, confinement: Confinement) -> None:
    """In namespaces nothing outlives the run, not even a process in a session of its own (a double
    fork and setsid); as a plain process, the process group is killed (a new session escapes it)."""
    if escape and confinement.isolation == "process":
        pytest.skip("a plain process cannot hold a new session: see the test below")
    marker = f"ufo-sandbox-leftover-{os.getpid()}-{len(escape)}"
    # the script waits (bounded by its wall limit) until the process it left is running, then ends
    code = (f"import os, time\nif os.fork() == 0:\n{escape}"
            f"    os.execv('/bin/sh', ['sh', '-c', 'sleep 1000; : {marker}'])\n"
            "def running():\n    for p in os.listdir('/proc'):\n        try:\n"
            f"            if p.isdigit() and b'{marker}' in open(f'/proc/{{p}}/cmdline', 'rb').read():\n"
            "                return True\n        except OSError:\n            pass\n    return False\n"
            "while not running():\n    time.sleep(0.05)\nTrue")
    result = await run(code)
    assert result.ok and result.value == "True", result
    # SIGKILL reaches the leftovers at once; the kernel may take a moment to take them off /proc
    for _ in range(int(HANG_GUARD / 0.05)):
        if not with_marker(marker):
            break
        await asyncio.sleep(0.05)
    assert not with_marker(marker)


async def test_a_process_that_leaves_the_group_cannot_keep_the_run_waiting(monkeypatch: pytest.MonkeyPatch,
                                                                            confinement: Confinement) -> None:
    """As a plain process, a new session escapes the group kill (namespaces close that: see above); it
    holds the pipes open, and the run still ends, within the grace period."""
    if confinement.isolation == "namespaces":
        pytest.skip("in namespaces nothing leaves: see test_processes_the_script_starts_are_killed_with_it")
    monkeypatch.setattr(process_module, "GRACE_SECONDS", 0.5)
    result = await run("import os, time\nread, write = os.pipe()\nif os.fork() == 0:\n    os.setsid()\n"
                       "    os.write(write, str(os.getpid()).encode())\n    time.sleep(1000)\n    os._exit(0)\n"
                       "int(os.read(read, 20))")
    assert result.ok and result.value is not None
    escaped = int(result.value)
    try:
        assert alive(escaped)
    finally:
        os.kill(escaped, signal.SIGKILL)


async def test_garbage_on_the_message_pipe_ends_the_run_with_a_protocol_error() -> None:
    code = EVERY_FD.format(action="os.write(fd, b'garbage \\xff\\n')") + "import time\ntime.sleep(1000)"
    result = await run(code)
    assert result.error == "the sandbox sent a line that is not JSON (10 bytes)"


@pytest.mark.parametrize(("message", "error"), [
    ("b'[1, 2]\\n'", "the sandbox sent a message that is not a JSON object"),
    ("b'{\"call\": \"click\", \"args\": []}\\n'", "the sandbox called a tool it was not given: click"),
    ("b'{\"what\": 1}\\n'", "the sandbox sent an unknown message (keys: ['what'])"),
    ("b'x' * 2_000_000", "the sandbox sent a message over 1048576 bytes"),
])
async def test_messages_a_script_forges_are_refused(message: str, error: str) -> None:
    code = EVERY_FD.format(action=f"os.write(fd, {message})") + "import time\ntime.sleep(1000)"
    result = await run(code)
    assert result.error == error


async def test_a_script_that_closes_the_message_pipe_and_hangs_is_stopped_by_the_wall_limit() -> None:
    result = await run(EVERY_FD.format(action="os.close(fd)") + "import time\ntime.sleep(1000)",
                       SandboxLimits(wall_seconds=1))
    assert result.timed_out


async def test_a_script_that_closes_the_message_pipe_and_exits_ends_the_run_at_once() -> None:
    result = await run(EVERY_FD.format(action="os.close(fd)") + "print('bye')")
    assert result.error == "the sandbox process exited with status 1"  # it could not report its end
    assert result.output.startswith("bye\n") and os.strerror(errno.EBADF) in result.output  # the OS's words
