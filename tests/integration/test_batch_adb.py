"""``batch`` over four emulated phones (``sim --port 0`` processes) behind the real adb server: every
task finishes, and a phone killed in the middle of a run leaves the pool while its task is run again
on another phone, both attempts recorded."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.adb_server import PrivateAdbServer, free_port
from tests.faults.conftest import Cli, wait_until
from tests.flows import DONE, OPEN, SWITCH, WIFI
from tests.integration.conftest import SimDevice
from ufo_mobile.fleet.resources import node_resources

pytestmark = pytest.mark.integration



@dataclass
class SimProcess:
    cli: Cli
    serial: str


@pytest.fixture
def four_phones(adb_server: PrivateAdbServer, tmp_path: Path) -> Iterator[list[SimProcess]]:
    phones: list[SimProcess] = []
    try:
        for _ in range(4):
            sim = Cli("sim", "--port", "0", cwd=tmp_path)
            phones.append(SimProcess(sim, ""))
            line = sim.wait_line("simulated phone listening on 127.0.0.1:")
            phones[-1].serial = f"127.0.0.1:{int(line.split('127.0.0.1:')[1].split(';')[0])}"
        yield phones
    finally:
        for phone in phones:
            phone.cli.signal(signal.SIGKILL)
            phone.cli.finish()
        adb_server.run("disconnect")


def write_tasks(folder: Path, count: int, *, hold: Path | None = None) -> list[Path]:
    """``count`` demo tasks; with ``hold``, each run's second reply waits until that file exists (a
    run is then certainly in flight after its first step, whatever the machine's speed)."""
    script = folder / "wifi-script.yaml"
    second = {"after_file": str(hold), "reply": WIFI} if hold is not None else WIFI
    script.write_text(json.dumps({"replies": [OPEN, second, SWITCH, DONE]}))
    paths = []
    for n in range(1, count + 1):
        path = folder / f"wifi-{n}.yaml"
        path.write_text(f"task: {{name: wifi-{n}, text: Turn on Wi-Fi}}\nmodel: {{script: {script.name}}}\n")
        paths.append(path)
    return paths


def run_on(batch_dir: Path, serial: str) -> Path | None:
    """The run directory of a run on ``serial`` that has recorded a step, if there is one yet."""
    for run_json in batch_dir.glob("*/run.json"):
        try:
            run = json.loads(run_json.read_text())
        except (OSError, ValueError):
            continue  # being written
        steps = run_json.parent / "steps.jsonl"
        if run.get("settings", {}).get("device", {}).get("serial") == serial and steps.is_file() \
                and steps.read_text().count("\n") >= 1:
            return run_json.parent
    return None


def records(batch_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (batch_dir / "batch.jsonl").read_text().splitlines()]


def test_eight_tasks_on_four_phones_survive_a_phone_killed_mid_run(tmp_path: Path, adb_server: PrivateAdbServer,
                                                                   four_phones: list[SimProcess]) -> None:
    go = tmp_path / "go-on"
    tasks = write_tasks(tmp_path, 8, hold=go)
    home = tmp_path / "home"
    home.mkdir()
    env = {"ANDROID_ADB_SERVER_PORT": str(adb_server.port), "HOME": str(home)}
    batch = Cli("batch", *map(str, tasks), "--devices", ",".join(p.serial for p in four_phones),
                "--adb-port", str(adb_server.port), "--log-dir", "logs", "--batch-id", "b", cwd=tmp_path, env=env)
    batch_dir = tmp_path / "logs" / "b"
    victim = four_phones[1]
    wait_until(lambda: run_on(batch_dir, victim.serial) is not None, f"a step recorded on {victim.serial}")
    killed_run = run_on(batch_dir, victim.serial)
    assert killed_run is not None
    victim.cli.signal(signal.SIGKILL)
    go.touch()  # the runs in flight may go on now

    code, out, err = batch.finish()
    assert code == 0, out + err
    assert "Traceback" not in err
    lines = records(batch_dir)
    by_task: dict[int, list[dict[str, Any]]] = {}
    for line in lines:
        by_task.setdefault(line["task"], []).append(line)
    assert sorted(by_task) == list(range(1, 9))
    assert all(attempts[-1]["status"] == "FINISH" for attempts in by_task.values())

    (killed,) = [x for x in lines if x["phone"] == victim.serial]  # the phone ran nothing after
    assert killed["run_dir"] == killed_run.name and killed["attempt"] == 1
    assert (killed["status"], killed["device_error"], killed["phone_lost"], killed["retried"]) == (
        "FAIL", "gone", True, True)
    first, second = by_task[killed["task"]]
    assert second["attempt"] == 2 and second["phone"] != victim.serial and second["status"] == "FINISH"
    assert second["run_dir"].endswith("-a2") and first["run_dir"].endswith("-a1")
    for attempt in (first, second):  # both runs are on disk, each with its report
        run = json.loads((batch_dir / attempt["run_dir"] / "run.json").read_text())
        assert run["status"] == attempt["status"]
        assert (batch_dir / attempt["report"]).is_file()
    assert len(lines) == 9 and sum(len(a) == 1 for a in by_task.values()) == 7

    page = (batch_dir / "batch.html").read_text()
    assert f'href="{first["report"]}"' in page and f'href="{second["report"]}"' in page
    assert f"phone lost: {victim.serial}: " in out
    assert "finished 8, failed 0, not run 0; retried 1 after a lost phone; 9 attempts" in out
    assert f"t{killed['task']:02d} will be run again on another phone (attempt 2)" in out


def test_a_phone_that_refuses_the_connection_is_one_line_before_anything_runs(
        tmp_path: Path, adb_server: PrivateAdbServer) -> None:
    (task,) = write_tasks(tmp_path, 1)
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    code, out, err = Cli("batch", str(task), "--devices", address, "--adb-port", str(adb_server.port),
                         "--log-dir", "logs", cwd=tmp_path, env={"HOME": str(tmp_path)}).finish()
    assert code == 2 and out == ""
    (line,) = err.splitlines()  # the rest of the line is the adb server's own answer
    assert line.startswith(f"error: --devices: adb connect {address}: ") and "Traceback" not in err
    assert not (tmp_path / "logs").exists()


def test_a_node_advertises_its_ready_phones_as_ray_resources(sim_device: SimDevice,
                                                             adb_server: PrivateAdbServer) -> None:
    resources = node_resources(adb_server.port)
    assert resources[f"phone:{sim_device.serial}"] == 1.0
    assert all(name.startswith("phone:") and value == 1.0 for name, value in resources.items())


def test_a_phone_of_a_remote_adb_server(tmp_path: Path, sim_device: SimDevice, adb_server: PrivateAdbServer) -> None:
    """``SERIAL@HOST:PORT``: the phone is reached through that server (here the private one on 127.0.0.1,
    while the batch's own local server, --adb-port, is one where nothing listens)."""
    (task,) = write_tasks(tmp_path, 1)
    spec = f"{sim_device.serial}@127.0.0.1:{adb_server.port}"
    code, out, err = Cli("batch", str(task), "--devices", spec, "--adb-port", str(free_port()), "--log-dir", "logs",
                         "--batch-id", "b", cwd=tmp_path, env={"HOME": str(tmp_path)}).finish()
    assert code == 0, out + err
    (line,) = records(tmp_path / "logs" / "b")
    assert (line["phone"], line["status"], line["steps"]) == (spec, "FINISH", 4)
    run = json.loads((tmp_path / "logs" / "b" / line["run_dir"] / "run.json").read_text())
    assert run["settings"]["device"]["adb_port"] == adb_server.port
