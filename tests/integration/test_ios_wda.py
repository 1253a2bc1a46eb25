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
from typing import Any

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
    assert "You operate an iPhone for a user" in system and "This phone is an iPhone: it has no back key" in system
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


def test_the_suite_runs_on_emulated_iphones_with_its_oracles(tmp_path: Path) -> None:
    from tests.unit.eval.conftest import SUITE
    from ufo_mobile.eval.results import read_results

    tasks = "settings-*,shop-add-to-cart,shop-checkout,messages-send,notes-create,contacts-call"
    code, out = run_cli("eval", str(SUITE), "--model", "oracle", "--iphone", "--tasks", tasks, "--log-dir",
                        str(tmp_path), "--quiet")
    assert code == 0, out
    (directory,) = list(tmp_path.iterdir())
    records = read_results(directory)
    assert len(records) == 9 and all(r["passed"] for r in records), [(r["task_id"], r["why"]) for r in records]
    assert json.loads((directory / "summary.json").read_text())["phone"] == "iphone"
    run = json.loads((Path(records[0]["run_dir"]) / "run.json").read_text())
    assert run["settings"]["device"]["kind"] == "wda"  # each run says it drove an iPhone
    first = json.loads((Path(records[0]["run_dir"]) / "steps" / "0001" / "prompt.json").read_text())
    assert "- system_button(button: home|enter|del|power|volume_down|volume_up)" in first[0]["content"]
    assert "Launcher" not in first[1]["content"]  # the home screen is no app to open
    assert "screen 1179x2556 px" in first[1]["content"]  # an iPhone's screen


async def test_an_alert_is_read_from_the_screenshot_at_once_and_answered_by_a_tap(wda: EmulatedWda) -> None:
    from ufo_mobile.core.ui.provider import AndroidStateProvider

    driver = IOSDriver(wda.url, timeout=10)
    try:
        await driver.connect()
        wda.show_alert("“Shop” Would Like to Send You Notifications", ["Don’t Allow", "Allow"])
        read = await AndroidStateProvider(driver, sleep=_no_sleep).read(observation_id="a")
        assert read.fallback == "screenshot_only" and read.refusals == ["alert"]  # no retries: it stays
        assert "“Shop” Would Like to Send You Notifications" in read.ui.formatted_text  # the model is told
        png = Image.open(io.BytesIO(await driver.screenshot()))
        assert png.size == SIZE  # the alert is in the picture the model taps on
    finally:
        await driver.close()


async def _no_sleep(seconds: float) -> None:
    raise AssertionError(f"a refused read was retried after {seconds} s")


async def test_the_mcp_server_serves_an_iphone(wda: EmulatedWda, tmp_path: Path) -> None:
    from tests.integration.test_mcp_server import stdio_session
    from tests.mcp_calls import call

    async with stdio_session(tmp_path, "--device", f"wda:{wda.url}") as client:
        shot = await call(client, "capture_screenshot")
        assert shot.startswith("data:image/png;base64,")
        launched = await call(client, "launch_app", package_name="com.apple.Preferences")
        assert launched["success"] is True, launched
        controls = await call(client, "get_app_window_controls_target_info")
        wifi = next(c for c in controls if c["name"] == "Wi-Fi")
        clicked = await call(client, "click_control", control_id=wifi["id"], control_name="Wi-Fi")
        assert clicked["success"] is True, clicked
        back = await call(client, "press_key", key_code="KEYCODE_BACK")
        assert back["success"] is False and "no back key" in json.dumps(back)  # said, not done
    assert wda.phone.current_screen() == "wifi"


def test_serve_runs_an_aip_task_on_an_iphone(wda: EmulatedWda, tmp_path: Path) -> None:
    import asyncio
    import signal

    from tests.integration.test_serve_aip import AipClient, is_end, served
    from ufo_mobile.shipped import CONFIG_DIR

    config = tmp_path / "base.yaml"
    config.write_text(f"model: {{script: {CONFIG_DIR / 'tasks' / 'scripts' / 'demo_wifi.yaml'}}}\n")

    async def talk(port: int) -> tuple[dict[str, Any], dict[str, Any]]:
        client = await AipClient.open(port, "galaxy")
        await client.send(type="device_info_request", request_id="info")
        info = await client.until(lambda m: m["type"] == "device_info_response")
        await client.send(type="task", client_type="constellation", client_id="galaxy", target_id="ufo_mobile",
                          session_id="galaxy@ios", request_id="r-ios", task_name="wifi", status="continue",
                          request="Turn on Wi-Fi")
        end = await client.find(is_end("galaxy@ios"))
        await client.ws.close()
        return info, end

    with served(tmp_path, "--devices", f"wda:{wda.url}", "--config", str(config)) as (serve, port):
        info, end = asyncio.run(talk(port))
        serve.signal(signal.SIGTERM)
        serve.finish()
    result = info["result"]
    assert (result["platform"], result["os_version"]) == ("ios", "iOS 17.5")
    assert result["phones"][0]["serial"] == f"wda:{wda.url}" and result["phones"][0]["screen_size"] == "1179x2556"
    assert (end["status"], end["result"]["answer"]) == ("completed", "Wi-Fi is on."), end
    assert wda.phone.state("com.android.settings")["wifi"] is True


def test_a_run_on_an_iphone_is_replayed_on_another(wda: EmulatedWda, tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--device", f"wda:{wda.url}", "--log-dir", str(tmp_path / "runs"))
    assert code == 0, out
    run_dir = only_run_dir(tmp_path / "runs")
    other = EmulatedWda(SimPhone(width=SIZE[0], height=SIZE[1]))
    other.start()
    try:
        code, out = run_cli("replay", str(run_dir), "--device", f"wda:{other.url}", "--log-dir",
                            str(tmp_path / "replays"))
    finally:
        other.stop()
    assert code == 0, out
    assert "4 of 4 recorded steps replayed, finished without the model" in out
    assert other.phone.state("com.android.settings")["wifi"] is True
