"""The agent on the simulated phone through the real adb server, adbutils and uiautomator2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.flows import focus_new_note_title
from tests.unit.tools.conftest import FORM, Harness
from ufo_mobile.core.device.adb import AdbDriver
from ufo_mobile.core.device.factory import make_driver
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.device.u2 import U2Driver
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.errors import DeviceError
from ufo_mobile.settings import DeviceSettings, Settings, load_settings
from ufo_mobile.shipped import CONFIG_DIR
from ufo_mobile.sim.android.profile import get_profile

pytestmark = pytest.mark.integration

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
HOSTILE = [
    "plain words",
    "'; rm -rf / #",
    '"double" and \'single\' quotes',
    "$(reboot) and `reboot` and ${HOME}",
    "a | b && c || d ; e > /sdcard/x < y &",
    "100%s sure, 50% off, %d %n",
    "back\\slash\\n literal",
    "line one\nline two",
    "emoji 🙂🚀 and flags 🇫🇷",
    "中文输入测试，标点。",
    "Привет, мир",
]


PIXEL = get_profile("pixel-14")
# The scripted demo names controls by the numbers of the app's window alone. uiautomator2's dump of a
# realistic phone holds every window (status bar first: its clock and battery take the first numbers),
# so runs of the script through u2 use a phone whose u2 dump has the app's window only; the window
# order itself is tested in test_driver_defects.py.
ONE_WINDOW_PIXEL = PIXEL.replace(window_roots=False)
SCRIPTED_RUN = pytest.mark.parametrize(("kind", "sim_device"), [("adb", PIXEL), ("u2", ONE_WINDOW_PIXEL)],
                                       indirect=["sim_device"])

# the fixed words that start every shell command the drivers run while typing (the typed text is only
# ever an argument: base64, or shell-quoted for ``input text``)
DRIVER_COMMANDS = {"input", "am", "ime", "settings", "getprop", "dumpsys", "uiautomator", "rm", "pm", "pkill",
                   "CLASSPATH=/data/local/tmp/u2.jar"}


# adbutils and uiautomator2 leave sockets to the garbage collector when the phone goes away in the
# middle of a call (and adbutils' app_current retries in its worker thread); only the tests in which
# the phone disappears or refuses the u2 server accept those library leaks.
LIBRARY_LEAKS_WHEN_THE_PHONE_GOES = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


# Commands that must succeed get a generous bound (a hang guard: a loaded machine may take seconds);
# a test that needs a command to time out makes only that command hang.
COMMAND_TIMEOUT = 60.0


def device_settings(sim_device: Any, adb_server: Any, kind: str, **extra: Any) -> DeviceSettings:
    """Settings for a driver on the emulated phone; app labels are cached in memory only."""
    extra.setdefault("label_cache_dir", None)
    return DeviceSettings(kind=kind, serial=sim_device.serial, adb_port=adb_server.port,  # type: ignore[arg-type]
                          command_timeout_seconds=extra.pop("timeout", COMMAND_TIMEOUT), **extra)


def demo_settings(tmp_path: Path, device: DeviceSettings | None = None, **limits: Any) -> Settings:
    overrides: dict[str, Any] = {"logs": {"dir": str(tmp_path)}}
    if device is not None:
        overrides["device"] = device.model_dump()
    if limits:
        overrides["limits"] = limits
    return load_settings(DEMO, overrides=overrides)


def actions_of(result: RunResult) -> list[Any]:
    lines = (result.run_dir / "steps.jsonl").read_text().splitlines()
    return [json.loads(line)["action"] for line in lines]


@SCRIPTED_RUN
async def test_demo_through_the_real_adb_stack_matches_the_in_process_run(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    reference = await Session(demo_settings(tmp_path / "sim"), device=SimDriver()).run()
    settings = demo_settings(tmp_path / kind, device_settings(sim_device, adb_server, kind))
    assert sim_device.phone.state("com.android.settings")["wifi"] is False
    result = await Session(settings).run()
    assert (result.status, result.steps, result.answer) == (reference.status, reference.steps, reference.answer)
    assert actions_of(result) == actions_of(reference)
    assert sim_device.phone.state("com.android.settings")["wifi"] is True


# adb types non-ASCII text through the ADB Keyboard, which stock phones lack: that phone has it (with
# its receiver bound late, as the released APK's is); u2 brings its own input method
@pytest.mark.parametrize(("kind", "sim_device"), [("adb", PIXEL.replace(adb_keyboard=True, adb_keyboard_late=1)),
                                                  ("u2", PIXEL)], indirect=["sim_device"])
async def test_hostile_text_is_typed_exactly_and_runs_nothing(kind: str, sim_device: Any, adb_server: Any) -> None:
    driver = make_driver(device_settings(sim_device, adb_server, kind))
    await driver.connect()
    await focus_new_note_title(driver)
    before = dict(sim_device.phone.state("com.android.settings"))
    for text in HOSTILE:
        sim_device.adbd.commands.clear()
        await driver.input_text(text, clear=True)
        assert sim_device.phone.state("com.example.notes")["title"] == text
        for command in sim_device.adbd.commands:  # every shell command the driver ran
            assert command.split()[0] in DRIVER_COMMANDS, command
    assert sim_device.phone.state("com.android.settings") == before
    assert sim_device.phone.current_app().package == "com.example.notes"
    await driver.close()


@pytest.mark.parametrize("kind", ["adb", "u2"])
async def test_type_at_a_label_is_refused_on_every_driver_and_a_labelled_field_is_named(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    """A tap on a plain label leaves the focus in the field that had it, so typing after it would
    go there (checked on the driver itself); the type tool refuses a label that names no one field,
    and types into the one a label names, saying which."""
    app = tmp_path / "form.yaml"
    app.write_text(FORM, encoding="utf-8")
    sim_device.phone.install_app(app)
    sim_device.phone.start_app("com.example.form")  # the Name field has the focus
    driver = make_driver(device_settings(sim_device, adb_server, kind))
    await driver.connect()
    try:
        assert kind == "adb" or isinstance(driver, U2Driver) and driver.using_u2
        phone = Harness(driver)
        await phone.observe()
        assert phone.ui is not None
        await driver.tap(*phone.ui.get_control(phone.index("Tell us about you")).bounds.center)
        await driver.input_text("Ada")
        assert sim_device.phone.state("com.example.form")["name"] == "Ada"  # not into the label, nor nowhere
        result = await phone.act("type", text="Bob", index=phone.index("Tell us about you"))
        assert not result.success and "'Tell us about you' (TextView) is not a text field: nothing was typed" \
            in result.summary
        assert sim_device.phone.state("com.example.form")["name"] == "Ada"
        result = await phone.act("type", text="ada@example.com", index=phone.index("Email address"))
        email, label = phone.index("email_field"), phone.index("Email address")
        assert result.success and f"into [{email}] EditText (the text field of [{label}] 'Email address')" \
            in result.summary
        assert sim_device.phone.state("com.example.form")["email"] == "ada@example.com"
    finally:
        await driver.close()


@LIBRARY_LEAKS_WHEN_THE_PHONE_GOES
async def test_u2_driver_falls_back_to_adb_when_its_server_cannot_start(
        sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    sim_device.adbd.block_u2(True)
    log = tmp_path / "run.log"
    settings = demo_settings(tmp_path, device_settings(sim_device, adb_server, "u2", u2_start_timeout_seconds=5))
    result = await Session(settings).run()
    assert result.status == "FINISH" and sim_device.phone.state("com.android.settings")["wifi"] is True
    log = result.run_dir / "run.log"
    assert "u2_unavailable_fallback_to_adb" in log.read_text()
    driver = U2Driver(sim_device.serial, client=sim_device.client, start_timeout=5)
    await driver.connect()
    assert not driver.using_u2


async def test_adb_driver_reports_a_missing_device(adb_server: Any) -> None:
    driver = AdbDriver("127.0.0.1:1", client=adb_server.client(), timeout=3)
    with pytest.raises(DeviceError):
        await driver.connect()


def step_lines(result: RunResult) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]


@LIBRARY_LEAKS_WHEN_THE_PHONE_GOES
@pytest.mark.parametrize("kind", ["adb", "u2"])
async def test_phone_disconnecting_mid_run_ends_in_fail_with_earlier_steps_on_disk(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    settings = demo_settings(tmp_path, device_settings(sim_device, adb_server, kind))

    def on_step(step: Any) -> None:
        if step.step == 2:
            sim_device.adbd.stop_in_thread()  # the phone goes away after step 2

    result = await Session(settings, on_step=on_step).run()
    assert result.status == "FAIL"
    assert result.reason.startswith("data_collection failed: [")
    lines = step_lines(result)
    assert [x["step"] for x in lines] == [1, 2, 3]
    assert all((result.run_dir / "steps" / f"{n:04d}" / "screenshot.png").exists() for n in (1, 2))


@LIBRARY_LEAKS_WHEN_THE_PHONE_GOES
@SCRIPTED_RUN
async def test_phone_going_away_while_the_model_thinks_fails_the_action(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    """The phone disconnects in the middle of step 3: after observing, before acting."""
    settings = demo_settings(tmp_path, device_settings(sim_device, adb_server, kind))
    script = ScriptedModel.from_file(settings.model.script)  # type: ignore[arg-type]

    class Unplugging:
        name = "unplugging"

        async def complete(self, messages: Any, *, schema: Any = None) -> Any:
            if len(script.calls) == 2:
                sim_device.adbd.stop_in_thread()
            return await script.complete(messages, schema=schema)

    result = await Session(settings, model=Unplugging()).run()
    assert result.status == "FAIL"
    assert result.reason.startswith("action_execution failed: [")
    lines = step_lines(result)
    assert [x["failed_phase"] for x in lines] == [None, None, "action_execution"]
    assert (result.run_dir / "steps" / "0003" / "screenshot.png").exists()
    assert sim_device.phone.state("com.android.settings")["wifi"] is False


class ShortDumpTimeout(AdbDriver):
    """An ``AdbDriver`` whose UI dump alone is bounded by 1 s: every other call keeps the generous
    ``COMMAND_TIMEOUT``, so on a loaded machine nothing but the hung dump can time out."""

    DUMP_SECONDS = 1.0

    async def _shell(self, command: str, *, what: str, check: bool = True, seconds: float | None = None) -> str:
        if what == "uiautomator dump":
            seconds = self.DUMP_SECONDS
        return await super()._shell(command, what=what, check=check, seconds=seconds)


async def test_a_hanging_command_times_out_and_fails_the_run(sim_device: Any, adb_server: Any,
                                                             tmp_path: Path) -> None:
    sim_device.adbd.hang("uiautomator dump")
    settings = demo_settings(tmp_path, device_settings(sim_device, adb_server, "adb"))
    driver = ShortDumpTimeout(sim_device.serial, client=sim_device.client, timeout=COMMAND_TIMEOUT)
    try:
        result = await Session(settings, device=driver).run()
    finally:
        await driver.close()
    assert result.status == "FAIL"
    assert result.reason.startswith(f"data_collection failed: [{sim_device.serial}] uiautomator dump timed out")
    assert len(step_lines(result)) == 1


@pytest.mark.parametrize("kind", ["adb", "u2"])
async def test_empty_dumps_are_retried_then_fail(kind: str, sim_device: Any, adb_server: Any,
                                                 tmp_path: Path) -> None:
    settings = demo_settings(tmp_path, device_settings(sim_device, adb_server, kind))
    sim_device.adbd.empty_dumps(1)  # one empty dump: the retry recovers
    ok = await Session(settings).run()
    assert ok.status == "FINISH" and step_lines(ok)[0]["dump_attempts"] == 2
    sim_device.adbd.empty_dumps(100)
    failed = await Session(demo_settings(tmp_path / "again", device_settings(sim_device, adb_server, kind))).run()
    assert failed.status == "FAIL"
    assert "UI dump still invalid after 3 attempts" in failed.reason
