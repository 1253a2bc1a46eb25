"""``python -m ufo_mobile batch`` in-process on simulated phones: files, summary, exit codes, one-line errors."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.unit.test_cli_runs import DEMO, run_cli
from ufo_mobile.shipped import CONFIG_DIR

ROOT = Path(__file__).resolve().parents[3]
FAIL_TASK = ROOT / "tests" / "data" / "tasks" / "fail_model.yaml"


def one_line_error(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def test_a_batch_on_simulated_phones_records_every_attempt(tmp_path: Path) -> None:
    code, out = run_cli("batch", str(DEMO), str(FAIL_TASK), str(DEMO), "--devices", "sim:2", "--log-dir",
                        str(tmp_path), "--batch-id", "b1")
    assert code == 1, out  # one task failed
    batch = tmp_path / "b1"
    lines = [json.loads(x) for x in (batch / "batch.jsonl").read_text().splitlines()]
    assert sorted((x["task"], x["attempt"], x["status"]) for x in lines) == [(1, 1, "FINISH"), (2, 1, "FAIL"),
                                                                           (3, 1, "FINISH")]
    assert {x["phone"] for x in lines} <= {"sim-1", "sim-2"}
    for line in lines:
        assert (batch / line["run_dir"] / "run.json").is_file() and (batch / line["report"]).is_file()
    assert sorted(p.name for p in batch.iterdir()) == ["batch.html", "batch.json", "batch.jsonl",
                                                       "t01-turn-on-wifi-a1", "t02-fail-model-a1",
                                                       "t03-turn-on-wifi-a1"]
    page = (batch / "batch.html").read_text()
    assert 'href="t02-fail-model-a1/report.html"' in page
    for script in ("demo_wifi.yaml", "fail_model.yaml"):  # what each ran with, as its run's first line says
        assert f"<th>setup</th><td>direct · simulated phone (in-process) · scripted model {script}</td>" in page
    summary = json.loads((batch / "batch.json").read_text())
    assert (summary["finished"], summary["failed"], summary["retried"], summary["steps"]) == (2, 1, 0, 10)
    assert "start t01 turn-on-wifi on sim-" in out and "step   1" not in out  # no per-step lines without a terminal
    assert "finished 2, failed 1, not run 0; retried 0 after a lost phone; 3 attempts, 10 steps in" in out
    assert "  t02 fail_model: failed: FAIL on sim-" in out
    assert out.rstrip().endswith(f"report: {batch / 'batch.html'}")


def test_a_batch_mixes_tasks_in_different_reply_formats(tmp_path: Path) -> None:
    script = CONFIG_DIR / "tasks" / "scripts" / "demo_wifi.yaml"
    tasks = []
    for fmt in ("ui-tars", "qwen3-vl", "autoglm", "json"):
        task = tmp_path / f"{fmt}.yaml"
        task.write_text(f"task: Turn on Wi-Fi\nmodel: {{script: {script}, format: {fmt}}}\n")
        tasks.append(str(task))
    code, out = run_cli("batch", *tasks, "--devices", "sim:2", "--log-dir", str(tmp_path / "logs"), "--batch-id", "f")
    assert code == 0, out
    page = (tmp_path / "logs" / "f" / "batch.html").read_text()
    for fmt in ("ui-tars", "qwen3-vl", "autoglm"):  # each run with its own model phase, as its setup line says
        assert f"scripted model demo_wifi.yaml ({fmt} format)" in page
    lines = [json.loads(x) for x in (tmp_path / "logs" / "f" / "batch.jsonl").read_text().splitlines()]
    assert [x["status"] for x in lines] == ["FINISH"] * 4


def test_a_folder_of_tasks_and_quiet(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    (folder / "scripts").mkdir(parents=True)
    shutil.copy(DEMO, folder / "a.yaml")
    shutil.copy(DEMO, folder / "b.yaml")
    shutil.copy(CONFIG_DIR / "tasks" / "scripts" / "demo_wifi.yaml", folder / "scripts")
    (folder / "default.yaml").write_text("limits: {max_steps: 6}\n")  # the defaults, not a task
    code, out = run_cli("batch", str(folder), "--log-dir", str(tmp_path / "logs"), "--quiet")
    assert code == 0, out
    assert out.startswith("batch batch-") and "2 tasks on 1 phone (local engine)" in out and "start " not in out


def test_every_task_is_checked_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: x\nmodel: {script: s.yaml}\nlimits: {max_stepz: 3}\n")
    code, _ = run_cli("batch", str(DEMO), str(bad), "--log-dir", str(tmp_path / "logs"))
    assert code == 2
    one_line_error(capsys, "bad.yaml:3", "limits.max_stepz", "unknown key")
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(("args", "words"), [
    (["--devices", "sim:0"], ["--devices", "1-256"]),
    (["--devices", "R58 M41"], ["--devices", "not a device serial"]),
    (["--address", "auto"], ["--address", "--engine ray"]),
    (["--cpus", "2"], ["--cpus", "--engine ray"]),
    (["--engine", "ray", "--address", "auto", "--cpus", "2"], ["--cpus", "a cluster (--address) has its own"]),
    (["--engine", "ray", "--processes", "2"], ["--processes", "the local engine"]),
])
def test_bad_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                         words: list[str]) -> None:
    code, _ = run_cli("batch", str(DEMO), "--log-dir", str(tmp_path / "logs"), *args)
    assert code == 2
    one_line_error(capsys, *words)
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("flag", ["--parallel", "--processes"])
def test_parallel_and_processes_must_be_positive(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    with pytest.raises(SystemExit) as info:
        run_cli("batch", str(DEMO), flag, "0")
    assert info.value.code == 2
    one_line_error(capsys, flag, "must be positive, not 0")


def test_the_ray_engine_without_ray_says_what_to_install(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    code, _ = run_cli("batch", str(DEMO), "--engine", "ray", "--log-dir", str(tmp_path / "logs"))
    assert code == 2
    assert one_line_error(capsys) == "error: --engine: the Ray engine needs Ray: pip install 'ufo-mobile[fleet]'"
    assert not (tmp_path / "logs").exists()
