"""The emulated device shell: its parser, expansions, operators, and that it never reaches the host."""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import Any

import pytest

from ufo_mobile.sim import SimPhone
from ufo_mobile.sim.devcmds_input import android_input_text
from ufo_mobile.sim.devshell import DeviceShell
from ufo_mobile.sim.devstate import ADB_IME, DeviceState
from ufo_mobile.sim.shio import BufferSink, BytesSource, ShellIO
from ufo_mobile.sim.shparse import ShellSyntaxError, parse


@pytest.fixture
def device() -> DeviceState:
    return DeviceState(SimPhone(), "sim")


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
    task = asyncio.ensure_future(run(device, "rm -f /x; uiautomator dump /sdcard/x.xml"))
    done, _ = await asyncio.wait([task], timeout=0.2)
    assert not done
    task.cancel()
    device.faults.unhang()
    assert (await run(device, "uiautomator dump /sdcard/x.xml"))[1] == "UI hierchary dumped to: /sdcard/x.xml\n"


HOSTILE_SCRIPTS = [
    "$(touch /tmp/pwned)", "`touch /tmp/pwned`", "sh -c 'python3 -c 1'", "/bin/sh -c id", "eval id", "exec id",
    "bash -c id", "echo x | sh", "IFS=/ ; $PATH", "source /etc/profile", ". /etc/profile", "nohup id",
    "env id", "busybox sh", "xargs id", "find / -exec id ;", "awk 'BEGIN{system(\"id\")}'",
]


@pytest.mark.parametrize("script", HOSTILE_SCRIPTS)
async def test_nothing_ever_reaches_the_host(device: DeviceState, script: str, monkeypatch: Any) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"host process started for {script!r}")

    for module, name in ((subprocess, "Popen"), (os, "system"), (os, "execv"), (os, "fork"),
                         (asyncio, "create_subprocess_exec"), (asyncio, "create_subprocess_shell")):
        monkeypatch.setattr(module, name, forbidden)
    await run(device, script)
