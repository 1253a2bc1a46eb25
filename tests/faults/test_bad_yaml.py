"""Bad YAML files through the real command line: exit 2, one line on stderr, no run directory.

Each case runs ``python -m ufo_mobile run`` in a subprocess, so a crash, a traceback or a runaway
allocation shows up as it would for a user. The timeout is only a hang guard.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.conftest import cli, one_line_error

GOOD_SCRIPT = "replies:\n  - {status: FINISH, thought: done, result: ok}\n"
GOOD_TASK = "task: x\nmodel: {script: script.yaml}\n"


def billion_laughs() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def run(tmp_path: Path, task: Path, *extra: str) -> tuple[int, str, str]:
    return cli("run", str(task), "--log-dir", str(tmp_path / "logs"), *extra, cwd=tmp_path)


def assert_one_line_error(tmp_path: Path, result: tuple[int, str, str], file: Path) -> str:
    code, _, err = result
    line = one_line_error(code, err, str(file))
    assert not (tmp_path / "logs").exists()
    return line


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    """A folder for the files of one case; its parent (tmp_path) holds no default.yaml."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "script.yaml").write_text(GOOD_SCRIPT)
    return folder


def test_a_good_task_does_run(tmp_path: Path, tasks: Path) -> None:
    """The control case: the same harness with good files makes a run directory."""
    task = tasks / "task.yaml"
    task.write_text(GOOD_TASK)
    code, _, err = run(tmp_path, task)
    assert code == 0, err[-2000:]
    assert (tmp_path / "logs").is_dir()


def test_bomb_as_the_task_file(tmp_path: Path, tasks: Path) -> None:
    task = tasks / "bomb.yaml"
    task.write_text(billion_laughs())
    line = assert_one_line_error(tmp_path, run(tmp_path, task), task)
    assert f"{task}:" in line and "too many nodes" in line


def test_bomb_as_the_defaults_file(tmp_path: Path, tasks: Path) -> None:
    task = tasks / "task.yaml"
    task.write_text(GOOD_TASK)
    defaults = tasks / "defaults.yaml"
    defaults.write_text(billion_laughs())
    line = assert_one_line_error(tmp_path, run(tmp_path, task, "--config", str(defaults)), defaults)
    assert "too many nodes" in line


def test_bomb_as_the_model_script(tmp_path: Path, tasks: Path) -> None:
    (tasks / "script.yaml").write_text(billion_laughs())
    task = tasks / "task.yaml"
    task.write_text(GOOD_TASK)
    line = assert_one_line_error(tmp_path, run(tmp_path, task), tasks / "script.yaml")
    assert "too many nodes" in line


def test_self_referencing_anchor(tmp_path: Path, tasks: Path) -> None:
    task = tasks / "task.yaml"
    task.write_text("task: x\nmodel: {script: script.yaml}\nlimits: &r [*r]\n")
    line = assert_one_line_error(tmp_path, run(tmp_path, task), task)
    assert f"{task}:3: alias *r refers to a node that contains it" in line


def test_binary_task_file(tmp_path: Path, tasks: Path) -> None:
    task = tasks / "task.yaml"
    task.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff")
    line = assert_one_line_error(tmp_path, run(tmp_path, task), task)
    assert "not UTF-8 text (byte 0x89 at offset 0)" in line


def test_binary_script_file(tmp_path: Path, tasks: Path) -> None:
    (tasks / "script.yaml").write_bytes(b"replies:\n  - \xff\xfe\x00\n")
    task = tasks / "task.yaml"
    task.write_text(GOOD_TASK)
    line = assert_one_line_error(tmp_path, run(tmp_path, task), tasks / "script.yaml")
    assert f"{tasks / 'script.yaml'}:2: not UTF-8 text (byte 0xff at offset 13)" in line


def test_empty_task_file(tmp_path: Path, tasks: Path) -> None:
    task = tasks / "task.yaml"
    task.write_text("")
    line = assert_one_line_error(tmp_path, run(tmp_path, task), task)
    assert line == f"error: {task}:1: the file is empty; it must be a mapping of settings"
