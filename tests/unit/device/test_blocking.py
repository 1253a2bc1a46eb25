from __future__ import annotations

import threading

import adbutils
import pytest

from ufo_mobile.core.device.adb import label_for, typeable_with_input_text
from ufo_mobile.core.device.blocking import call_blocking, classify
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError, DeviceTimeoutError


async def test_result_comes_back_from_the_worker_thread() -> None:
    main = threading.get_ident()
    assert await call_blocking(lambda: threading.get_ident() != main, limit=60, serial="s", what="x") is True


async def test_a_hung_call_becomes_a_timeout_error_with_the_serial() -> None:
    release = threading.Event()
    try:
        with pytest.raises(DeviceTimeoutError) as info:
            await call_blocking(release.wait, 30, limit=0.05, serial="emu-7", what="uiautomator dump")
    finally:
        release.set()
    assert info.value.serial == "emu-7"
    assert str(info.value) == "[emu-7] uiautomator dump timed out after 0.05 s"


@pytest.mark.parametrize(("exc", "kind"), [
    (adbutils.AdbTimeout("read timeout"), DeviceTimeoutError),
    (TimeoutError(), DeviceTimeoutError),
    (ConnectionResetError("peer reset"), DeviceDisconnectedError),
    (BrokenPipeError(), DeviceDisconnectedError),
    (adbutils.AdbError("device 'emulator-5554' not found"), DeviceDisconnectedError),
    (adbutils.AdbError("device offline"), DeviceDisconnectedError),
    (adbutils.AdbError("device unauthorized. This adb server's $ADB_VENDOR_KEYS is not set"), DeviceDisconnectedError),
    # what adbutils raises when the phone goes away in the middle of a shell command (seen with a
    # SIGKILLed emulated adbd behind the real adb server): the output ends before its exit marker
    (adbutils.AdbError("shell output invalid", "sleep 3; echo X4EXIT:$?", b""), DeviceDisconnectedError),
    (adbutils.AdbError("Failure [INSTALL_FAILED_VERSION_DOWNGRADE]"), DeviceCommandError),
    (ValueError("bad value"), DeviceCommandError),
])
async def test_library_errors_are_mapped_once(exc: Exception, kind: type[Exception]) -> None:
    def boom() -> None:
        raise exc

    with pytest.raises(kind) as info:
        await call_blocking(boom, limit=60, serial="dev-1", what="shell")
    assert type(info.value.__cause__) is type(exc)
    assert str(info.value).startswith("[dev-1] shell")
    assert isinstance(classify(exc, serial="dev-1", what="shell"), kind)


@pytest.mark.parametrize(("text", "plain"), [
    ("hello", True), ("Hello world, it's 5:30!", True), ("a'b\"c;d|e$(f)`g`", True), ("", True),
    ("100%s sure", False), ("line\nbreak", False), ("tab\there", False), ("你好", False), ("café", False),
    ("🙂", False),
])
def test_which_texts_input_text_types_exactly(text: str, plain: bool) -> None:
    assert typeable_with_input_text(text) is plain


def test_labels() -> None:
    assert label_for("com.android.settings") == "Settings"
    assert label_for("com.example.shopping") == "Shopping"


def test_a_call_that_never_returns_does_not_keep_the_process_alive() -> None:
    """The worker of a timed-out call is abandoned, never joined: the interpreter exits anyway."""
    import subprocess
    import sys

    program = (
        "import asyncio, threading\n"
        "from ufo_mobile.core.device.blocking import call_blocking\n"
        "from ufo_mobile.errors import DeviceTimeoutError\n"
        "async def main():\n"
        "    try:\n"
        "        await call_blocking(threading.Event().wait, limit=0.05, serial='s', what='frozen')\n"
        "    except DeviceTimeoutError as exc:\n"
        "        print(exc)\n"
        "asyncio.run(main())\n"
    )
    # The bound is only a hang guard: before the fix this process never exited.
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[s] frozen timed out after 0.05 s"
    assert proc.stderr == ""


async def test_daemon_workers_are_kept_for_the_next_call_and_a_hung_one_holds_nothing_up() -> None:
    from ufo_mobile.core.device.blocking import DaemonWorkers

    workers = DaemonWorkers("test")
    first = await call_blocking(threading.get_ident, limit=60, serial="s", what="x", workers=workers)
    second = await call_blocking(threading.get_ident, limit=60, serial="s", what="x", workers=workers)
    assert first == second != threading.get_ident()  # the same daemon thread, kept
    release = threading.Event()
    try:
        with pytest.raises(DeviceTimeoutError):
            await call_blocking(release.wait, 30, limit=0.05, serial="s", what="frozen", workers=workers)
        after = await call_blocking(threading.get_ident, limit=60, serial="s", what="x", workers=workers)
        assert after != first  # the hung call keeps its thread; the next call got another one
    finally:
        release.set()
    workers.close()
    assert workers.closed
    assert await call_blocking(lambda: 7, limit=60, serial="s", what="x", workers=workers) == 7  # still works


def test_idle_daemon_workers_end_and_never_keep_the_process_alive() -> None:
    import subprocess
    import sys

    program = (
        "import asyncio, threading, time\n"
        "from ufo_mobile.core.device.blocking import DaemonWorkers, call_blocking\n"
        "from ufo_mobile.errors import DeviceTimeoutError\n"
        "workers = DaemonWorkers('w', idle_seconds=0.05)\n"
        "async def main():\n"
        "    await call_blocking(lambda: None, limit=60, serial='s', what='x', workers=workers)\n"
        "    deadline = time.monotonic() + 60\n"
        "    while any(t.name == 'w' for t in threading.enumerate()) and time.monotonic() < deadline:\n"
        "        await asyncio.sleep(0.01)\n"
        "    print('idle worker ended:', not any(t.name == 'w' for t in threading.enumerate()))\n"
        "    try:\n"
        "        await call_blocking(threading.Event().wait, limit=0.05, serial='s', what='frozen', workers=workers)\n"
        "    except DeviceTimeoutError as exc:\n"
        "        print(exc)\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["idle worker ended: True", "[s] frozen timed out after 0.05 s"]
    assert proc.stderr == ""
