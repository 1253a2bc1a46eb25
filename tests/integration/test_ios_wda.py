"""The iPhone driver against the emulated WebDriverAgent, through the real client library (wdapy) over
HTTP: points and pixels on a 3x screen, the tree read as the runtime's screen, typing and clearing,
an iPhone's keys (no back key), apps by bundle id, a stale session, an alert that blocks the tree, a
WebDriverAgent that stops answering; and the demo run end to end with ``--device wda:URL``, its prompt
offering the iPhone's keys only."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.unit.test_cli_runs import DEMO, only_run_dir, run_cli, steps_of
from ufo_mobile.core.device.wda import IOSDriver
from ufo_mobile.core.ui.state import build_ui_state
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError, DumpUnavailableError
from ufo_mobile.sim.phone.simphone import SimPhone
from ufo_mobile.sim.servers.wda.server import EmulatedWda, WdaLimits

pytestmark = pytest.mark.integration

SIZE = (1179, 2556)  # an iPhone 15: 393x852 points at 3x


@pytest.fixture
def wda() -> Iterator[EmulatedWda]:
    server = EmulatedWda(SimPhone(width=SIZE[0], height=SIZE[1]), limits=WdaLimits(source_alert_wait=0.2))
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def screen_of(driver: IOSDriver) -> str:
    return build_ui_state(await driver.get_ui_tree(), observation_id="t", screen_size=SIZE).formatted_text


def centre_of(text: str, label: str) -> tuple[int, int]:
    """The @x,y of the first line that shows ``label``."""
    line = next(line for line in text.splitlines() if f'"{label}"' in line and "@" in line)
    x, y = line.rsplit("@", 1)[1].split()[0].split(",")
    return int(x), int(y)


async def test_the_driver_reads_and_acts_in_pixels_on_a_3x_screen(wda: EmulatedWda) -> None:
    driver = IOSDriver(wda.url, timeout=10)
    try:
        await driver.connect()
        assert await driver.scale() == 3
        assert await driver.screen_size() == SIZE
        assert Image.open(io.BytesIO(await driver.screenshot())).size == SIZE  # the screenshot is pixels
        home = await screen_of(driver)
        assert home.startswith("App com.apple.springboard, screen 1179x2556 px")
        assert (await driver.current_app()).package == "com.apple.springboard"
        await driver.tap(*centre_of(home, "Settings"))  # pixels in, points to WDA, the icon opened
        assert (await driver.current_app()).package == "com.apple.Preferences"
        assert wda.phone.current_app().package == "com.android.settings"
        settings = await screen_of(driver)
        await driver.tap(*centre_of(settings, "Wi-Fi"))
        page = await screen_of(driver)
        assert 'Switch "Use Wi-Fi" click check=off' in page
        await driver.tap(*centre_of(page, "Use Wi-Fi"))
        assert 'Switch "Use Wi-Fi" click check=on' in await screen_of(driver)
        assert wda.phone.state("com.android.settings")["wifi"] is True
    finally:
        await driver.close()


async def test_apps_keys_and_typing_as_an_iphone_has_them(wda: EmulatedWda) -> None:
    driver = IOSDriver(wda.url, timeout=10, apps={"Shop": "com.example.shop", "Nothing": "com.example.absent"})
    try:
        apps = {app.label: app.package for app in await driver.get_apps()}
        assert apps["Settings"] == "com.apple.Preferences" and apps["Messages"] == "com.apple.MobileSMS"
        assert "Nothing" not in apps and "Camera" not in apps  # not installed: WDA says state 0
        with pytest.raises(DeviceCommandError, match="an iPhone has no back key"):
            await driver.press_key("back")
        await driver.start_app("com.apple.MobileSMS")
        assert wda.phone.current_app().package == "com.google.android.apps.messaging"
        await driver.tap(*centre_of(await screen_of(driver), "Start chat"))
        shown = await screen_of(driver)
        assert "keyboard shown" in shown.split("\n", 1)[0]  # the field has the focus: the keyboard is up
        await driver.input_text("Ali")
        await driver.input_text("Bob", clear=True)  # what the field held is deleted first
        assert wda.phone.state("com.google.android.apps.messaging")["recipient_query"] == "Bob"
        await driver.press_key("home")
        assert (await driver.current_app()).package == "com.apple.springboard"
    finally:
        await driver.close()


async def test_a_stale_session_an_alert_and_a_lost_wda(wda: EmulatedWda) -> None:
    driver = IOSDriver(wda.url, timeout=10)
    try:
        await driver.connect()
        first = wda.session_id
        other = IOSDriver(wda.url, timeout=10)
        await other._call(lambda c: c.session(), what="another session")  # replaces this driver's
        assert wda.session_id != first
        await driver.press_key("home")  # wdapy makes a new session when told the old one is gone
        wda.show_alert("“Shop” Would Like to Send You Notifications", ["Don’t Allow", "Allow"])
        with pytest.raises(DumpUnavailableError, match="an alert keeps WebDriverAgent from reading the screen"):
            await driver.get_ui_tree()
        await other._value("POST", "/alert/accept", what="accept")
        assert "App com.apple.springboard" in await screen_of(driver)
        wda.stop()
        with pytest.raises(DeviceDisconnectedError):
            await driver.tap(10, 10)
    finally:
        await driver.close()


@pytest.mark.parametrize("mode", ["reasoning", "codeact"])
def test_the_demo_runs_on_the_emulated_iphone_in_every_mode(wda: EmulatedWda, tmp_path: Path, mode: str) -> None:
    code, out = run_cli("run", str(DEMO), "--device", f"wda:{wda.url}", "--mode", mode, "--log-dir", str(tmp_path))
    assert code == 0, out
    assert "FINISH after 4 steps" in out and "Wi-Fi is on." in out
    assert wda.phone.state("com.android.settings")["wifi"] is True


def test_the_demo_runs_on_the_emulated_iphone(wda: EmulatedWda, tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--device", f"wda:{wda.url}", "--log-dir", str(tmp_path))
    assert code == 0, out
    assert "FINISH after 4 steps" in out and "Wi-Fi is on." in out
    assert wda.phone.state("com.android.settings")["wifi"] is True
    run_dir = only_run_dir(tmp_path)
    steps = steps_of(run_dir)
    assert [s["action"]["name"] if s["action"] else s["status"] for s in steps] == [
        "open_app", "click", "click", "FINISH"]
    assert steps[0]["result"]["summary"] == "opened Settings (com.apple.Preferences)"
    system = json.loads((run_dir / "steps" / "0001" / "prompt.json").read_text())[0]["content"]
    assert "- system_button(button: home|enter|del|power|volume_down|volume_up)" in system  # no back key
    assert "iPhone (WebDriverAgent at 127.0.0.1:" in (run_dir / "report.html").read_text()


def test_a_bad_wda_address_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("run", str(DEMO), "--device", "wda:127.0.0.1:8100", "--log-dir", str(tmp_path))
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --device:") and "wda:http://HOST:PORT" in err and "\n" not in err


def test_devices_lists_the_iphones_asked_for(wda: EmulatedWda) -> None:
    code, out = run_cli("devices", "--wda", wda.url, "--wda", "http://127.0.0.1:9")
    assert code == 0, out
    header, ready, gone, note = out.splitlines()
    assert header.split() == ["SERIAL", "STATE", "MODEL", "OS", "SCREEN"]
    assert ready.split() == [f"wda:{wda.url}", "ready", "iPhone", "iOS", "17.5", "1179x2556"]
    assert gone.split()[:2] == ["wda:http://127.0.0.1:9", "unreachable"]
    assert note.startswith("wda:http://127.0.0.1:9: ") and "iproxy 8100 8100" in note


def test_a_batch_mixes_an_iphone_and_an_android_phone(wda: EmulatedWda, tmp_path: Path) -> None:
    code, out = run_cli("batch", str(DEMO), str(DEMO), "--devices", f"sim:1,wda:{wda.url}", "--log-dir",
                        str(tmp_path), "--batch-id", "mix")
    assert code == 0, out
    lines = [json.loads(x) for x in (tmp_path / "mix" / "batch.jsonl").read_text().splitlines()]
    assert sorted((x["phone"], x["status"]) for x in lines) == [("sim-1", "FINISH"), (f"wda:{wda.url}", "FINISH")]
    assert wda.phone.state("com.android.settings")["wifi"] is True
    page = (tmp_path / "mix" / "batch.html").read_text()
    assert "iPhone (WebDriverAgent at 127.0.0.1:" in page and "simulated phone (in-process)" in page


def test_a_batch_names_an_iphone_that_does_not_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("batch", str(DEMO), "--devices", "wda:http://127.0.0.1:9", "--log-dir", str(tmp_path))
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --devices: wda:http://127.0.0.1:9: unreachable") and "\n" not in err
