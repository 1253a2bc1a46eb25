"""What ships in the package (``ufo_mobile/config``): the demo, the example tasks, the suite and the
defaults file, named on the command line without a path, from any directory."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ufo_mobile import shipped
from ufo_mobile.cli import main
from ufo_mobile.errors import ConfigError


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


def test_the_shipped_files_are_in_the_package() -> None:
    assert shipped.DEFAULT_CONFIG.is_file()
    assert {"demo", "openai", "azure", "local"} <= set(shipped.task_names())
    assert len(list(shipped.SUITE_DIR.glob("*.yaml"))) == 30


def test_a_name_is_a_shipped_task_and_a_path_that_exists_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert shipped.task_path(Path("demo")) == shipped.TASKS_DIR / "demo.yaml"
    assert shipped.suite_path(Path("suite")) == shipped.SUITE_DIR
    assert shipped.suite_path(Path("demo")) == shipped.TASKS_DIR / "demo.yaml"
    (tmp_path / "demo").write_text("task: mine\n")
    (tmp_path / "suite").mkdir()
    assert shipped.task_path(Path("demo")) == Path("demo")
    assert shipped.suite_path(Path("suite")) == Path("suite")
    assert shipped.task_path(Path("tasks/x.yaml")) == Path("tasks/x.yaml")  # a path is never a name


def test_an_unknown_name_is_one_line_listing_the_shipped_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^task demox: no such task file, and no shipped task of that name "
                                          r"\(shipped: azure, demo, local, openai\)$"):
        shipped.task_path(Path("demox"))
    assert run_cli("run", "demox")[0] == 2
    assert capsys.readouterr().err.startswith("error: task demox: no such task file")
    assert not (tmp_path / "logs").exists()


def test_run_demo_by_name_from_another_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = run_cli("run", "demo")
    assert code == 0, out
    assert "FINISH after 4 steps" in out
    (run_dir,) = (tmp_path / "logs").iterdir()  # logs.dir is relative to where the command runs
    assert (run_dir / "report.html").is_file()


def test_eval_and_batch_take_the_shipped_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = run_cli("eval", "suite", "--model", "oracle", "--tasks", "clock-turn-off", "--quiet")
    assert code == 0, out
    assert "success rate: 1/1 runs" in out
    code, out = run_cli("batch", "demo", "demo", "--devices", "sim:2", "--quiet")
    assert code == 0, out
    assert "finished 2, failed 0" in out


def test_config_prints_the_defaults_and_copies_them_without_overwriting(tmp_path: Path) -> None:
    code, out = run_cli("config", "--print")
    assert code == 0 and out == shipped.DEFAULT_CONFIG.read_text(encoding="utf-8")
    assert run_cli("config", "--print") == (0, out)
    assert run_cli("config", "--path") == (0, f"{shipped.CONFIG_DIR}\n")
    target = tmp_path / "mine"
    code, out = run_cli("config", "--copy", str(target))
    assert code == 0 and out.startswith("copied ")
    copied = sorted(p.relative_to(target) for p in target.rglob("*.yaml"))
    assert copied == sorted(p.relative_to(shipped.CONFIG_DIR) for p in shipped.CONFIG_DIR.rglob("*.yaml"))
    assert (target / "default.yaml").read_bytes() == shipped.DEFAULT_CONFIG.read_bytes()
    (target / "default.yaml").write_text("# mine\n")
    with pytest.raises(ConfigError, match="already exists"):
        shipped.copy_config(target)
    assert (target / "default.yaml").read_text() == "# mine\n"  # nothing overwritten
    code, out = run_cli("run", str(target / "tasks" / "demo.yaml"), "--log-dir", str(tmp_path / "logs"))
    assert code == 0, out  # the copy runs as it is (its script path is relative to the task file)
