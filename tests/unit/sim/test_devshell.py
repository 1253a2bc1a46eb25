"""The emulated device shell: its parser, expansions, operators, and that it never reaches the host."""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import Any

import pytest

from ufo_mobile.sim import SimPhone
from ufo_mobile.sim.android.commands.input import android_input_text
from ufo_mobile.sim.android.devstate import ADB_IME, DeviceState
from ufo_mobile.sim.android.profile import get_profile
from ufo_mobile.sim.android.shell import DeviceShell, builtin_commands
from ufo_mobile.sim.android.shio import BufferSink, BytesSource, ShellIO
from ufo_mobile.sim.android.shparse import ShellSyntaxError, parse


@pytest.fixture
def device() -> DeviceState:
    """The kind phone: these tests are about the shell and its commands, not a profile's quirks."""
    return DeviceState(SimPhone(), "sim", profile=get_profile("kind"))


async def run(device: DeviceState, script: str, stdin: bytes = b"", shell: DeviceShell | None = None
              ) -> tuple[int, str, str]:
    out, err = BufferSink(), BufferSink()
    status = await (shell or DeviceShell(device)).run(script, ShellIO(out, err, BytesSource(stdin)))
    return status, out.data.decode(), err.data.decode()


@pytest.mark.parametrize(("script", "expected"), [
    ("echo 'a  b' \"c  $X\" d\\ e", "a  b c  1 d e\n"),
    ("echo \"it's\" 'say \"hi\"' \\$X ${X}y $Xy", "it's say \"hi\" $X 1y\n"),
    ("echo $(id) `id` \"$(ls /)\" '$(x)'", "$(id) `id` $(ls /) $(x)\n"),
    ("false; echo $?; true && echo yes || echo no; false || echo rescued", "1\nyes\nrescued\n"),
    ("Y=2 echo $Y; Y=3; echo $Y", "\n3\n"),
    ("echo a # a comment\necho b", "a\nb\n"),
    ("echo one &&\n echo two", "one\ntwo\n"),
    ("echo $UNSET x \"$UNSET\"", "x \n"),
])
async def test_quoting_expansion_and_operators(device: DeviceState, script: str, expected: str) -> None:
    shell = DeviceShell(device)
    shell.vars["X"] = "1"
    status, out, _ = await run(device, script, shell=shell)
    assert (status, out) == (0, expected)


async def test_exit_status_and_unknown_commands(device: DeviceState) -> None:
    assert (await run(device, "exit 3; echo never"))[:2] == (3, "")
    status, out, err = await run(device, "nosuch --flag; echo $?")
    assert (status, out, err) == (0, "127\n", "/system/bin/sh: nosuch: inaccessible or not found\n")
    assert (await run(device, "/system/bin/echo hi"))[1] == "hi\n"


@pytest.mark.parametrize("script", ["echo (", "echo a & echo b", "cat <<EOF", "echo 'open", "echo \"open", "| x",
                                    "echo a &&", "> "])
def test_syntax_errors(script: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse(script)


async def test_syntax_error_message_and_status(device: DeviceState) -> None:
    assert await run(device, "echo (") == (1, "", "/system/bin/sh: syntax error: '(' unexpected\n")


async def test_pipes_and_redirections_use_the_device_file_system(device: DeviceState) -> None:
    status, out, err = await run(device, "echo one > /sdcard/f; echo two >> /sdcard/f; cat /sdcard/f | grep -c o;"
                                         " cat /missing 2>/dev/null; echo $?; ls /nowhere 2>&1 | wc -l")
    assert (status, out, err) == (0, "2\n1\n1\n", "")
    assert device.fs.read("/storage/emulated/0/f") == b"one\ntwo\n"
    assert (await run(device, "cat < /sdcard/f | head -n 1"))[1] == "one\n"
    assert (await run(device, "grep -E 'x|tw' < /sdcard/f; grep 'x|tw' /sdcard/f"))[1] == "two\n"


def test_input_text_percent_s_rule() -> None:
    assert android_input_text("a%sb%%sc%d%") == "a b% c%d%"


async def test_adb_keyboard_listens_only_while_selected(device: DeviceState) -> None:
    device.phone.start_app("com.example.notes", ".EditNoteActivity")
    device.phone.tap(540, 400)  # the title field
    field = device.phone.focused_field()
    assert field == "title"
    await run(device, "am broadcast -a ADB_INPUT_TEXT --es msg early")
    assert device.phone.state("com.example.notes")["title"] == ""
    status, out, _ = await run(device, f"ime set {ADB_IME}")
    assert status != 0  # not enabled yet
    await run(device, f"ime enable {ADB_IME} && ime set {ADB_IME}")
    _, out, _ = await run(device, "am broadcast -a ADB_INPUT_TEXT --es msg 'x; $(id) `id` \"q\"'")
    assert out.endswith("Broadcast completed: result=0\n")
    assert device.phone.state("com.example.notes")["title"] == "x; $(id) `id` \"q\""


async def test_am_start_reports_missing_activities(device: DeviceState) -> None:
    status, out, err = await run(device, "am start -n com.example.notes/.Nope")
    assert status != 0 and "does not exist" in err
    assert device.phone.current_app().package == "com.android.launcher3"


async def test_hung_commands_wait_until_cancelled(device: DeviceState) -> None:
    device.faults.hang("uiautomator dump")
    reached = asyncio.Event()

    async def mark(ctx: Any, args: list[str]) -> int:
        reached.set()
        return 0

    shell = DeviceShell(device, {**builtin_commands(), "mark": mark})
    task = asyncio.ensure_future(run(device, "rm -f /x; mark; uiautomator dump /sdcard/x.xml", shell=shell))
    # ``mark`` never suspends, so once the event wakes us the shell is waiting in the hung command
    await asyncio.wait_for(reached.wait(), 60)  # 60 s: a hang guard only
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert device.fs.stat("/sdcard/x.xml") is None  # the hung dump never ran
    device.faults.unhang()
    assert (await run(device, "uiautomator dump /sdcard/x.xml"))[1] == "UI hierchary dumped to: /sdcard/x.xml\n"


def not_found(name: str) -> tuple[int, str, str]:
    return 127, "", f"/system/bin/sh: {name}: inaccessible or not found\n"


DEVICE_ID = "uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),3003(inet) context=u:r:shell:s0\n"
# each hostile script and what the toy shell answers: the device's own ``id``, or "not found"
HOSTILE_SCRIPTS: list[tuple[str, tuple[int, str, str]]] = [
    ("$(touch /tmp/pwned)", not_found("$(touch /tmp/pwned)")),
    ("`touch /tmp/pwned`", not_found("`touch /tmp/pwned`")),
    ("sh -c 'python3 -c 1'", not_found("python3")),
    ("/bin/sh -c id", (0, DEVICE_ID, "")),
    ("eval id", not_found("eval")),
    ("exec id", not_found("exec")),
    ("bash -c id", not_found("bash")),
    ("echo x | sh", not_found("x")),
    ("IFS=/ ; $PATH", not_found("/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/odm/bin:"
                                "/vendor/bin:/vendor/xbin")),
    ("source /etc/profile", not_found("source")),
    (". /etc/profile", not_found(".")),
    ("nohup id", not_found("nohup")),
    ("env id", not_found("env")),
    ("busybox sh", not_found("busybox")),
    ("xargs id", not_found("xargs")),
    ("find / -exec id ;", not_found("find")),
    ("awk 'BEGIN{system(\"id\")}'", not_found("awk")),
]

# every way Python starts a host process (the higher-level helpers, subprocess.run/check_output and
# os.popen, all go through subprocess.Popen)
HOST_ENTRY_POINTS: list[tuple[Any, str]] = [
    (subprocess, "Popen"), (os, "system"), (os, "execv"), (os, "execve"), (os, "execvp"), (os, "fork"),
    (os, "forkpty"), (os, "posix_spawn"), (os, "posix_spawnp"), (os, "spawnv"),
    (asyncio, "create_subprocess_exec"), (asyncio, "create_subprocess_shell"),
]


@pytest.fixture
def host_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replaces every host entry point with a recorder: each call is appended here, then refused.

    The recorder raises so that nothing runs, but the device shell turns a command's exception into
    exit status 255, so the raise alone would go unseen: tests assert on this list instead."""
    calls: list[str] = []

    def recorder(qualname: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            calls.append(qualname)
            raise AssertionError(f"host process started through {qualname}")
        return record

    for module, name in HOST_ENTRY_POINTS:
        if hasattr(module, name):
            monkeypatch.setattr(module, name, recorder(f"{module.__name__}.{name}"))
    return calls


@pytest.mark.parametrize(("script", "expected"), HOSTILE_SCRIPTS, ids=[s for s, _ in HOSTILE_SCRIPTS])
async def test_nothing_ever_reaches_the_host(device: DeviceState, script: str, expected: tuple[int, str, str],
                                             host_calls: list[str]) -> None:
    assert await run(device, script) == expected
    assert host_calls == []


async def _leak_subprocess_run(ctx: Any, args: list[str]) -> int:
    subprocess.run(["id"], check=False)  # noqa: ASYNC221 (a deliberate leak: the recorder refuses it)
    return 0


async def _leak_os_popen(ctx: Any, args: list[str]) -> int:
    os.popen("id").close()  # noqa: ASYNC220 (a deliberate leak: the recorder refuses it)
    return 0


async def _leak_os_system(ctx: Any, args: list[str]) -> int:
    return os.system("id")  # noqa: ASYNC221 (a deliberate leak: the recorder refuses it)


async def _leak_asyncio(ctx: Any, args: list[str]) -> int:
    proc = await asyncio.create_subprocess_exec("id")
    return await proc.wait()


@pytest.mark.parametrize(("leak", "entry_point"), [
    (_leak_subprocess_run, "subprocess.Popen"), (_leak_os_popen, "subprocess.Popen"),
    (_leak_os_system, "os.system"), (_leak_asyncio, "asyncio.create_subprocess_exec"),
])
async def test_the_host_detector_sees_a_command_that_reaches_the_host(
        device: DeviceState, host_calls: list[str], leak: Any, entry_point: str) -> None:
    """The check above can fail: a device command that does start a host process is recorded, even
    though the shell swallows the refusal into an ordinary exit status 255."""
    shell = DeviceShell(device, {**builtin_commands(), "leak": leak})
    status, out, err = await run(device, "leak; echo after $?", shell=shell)
    assert host_calls == [entry_point]
    assert (status, out) == (0, "after 255\n")  # what the old test saw: an ordinary failing command
    assert err.startswith("Exception occurred while executing 'leak':\nAssertionError('host process started")
