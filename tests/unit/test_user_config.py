"""The user config file and the UFO_MOBILE_* variables (ufo_mobile/settings/user.py): where the file
is, how it is layered between the shipped defaults and a task's files, and ``config`` showing the
settings in force with the source of each."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ufo_mobile.cli import main
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import load_goal, load_settings, load_task, user_config_path
from ufo_mobile.settings.user import SHIPPED_DEFAULTS, STARTER
from ufo_mobile.shipped import DEFAULT_CONFIG, TASKS_DIR


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user config file at ``$UFO_MOBILE_CONFIG`` (each test writes it)."""
    path = tmp_path / "user" / "config.yaml"
    path.parent.mkdir()
    monkeypatch.setenv("UFO_MOBILE_CONFIG", str(path))
    return path


def test_the_suite_reads_no_developers_config() -> None:
    path = user_config_path()
    assert path.name == "no-user-config.yaml" and not path.exists()


@pytest.mark.parametrize(("env", "platform", "expected"), [
    ({"UFO_MOBILE_CONFIG": "/etc/mine.yaml"}, "linux", Path("/etc/mine.yaml")),
    ({"XDG_CONFIG_HOME": "/x"}, "linux", Path("/x/ufo_mobile/config.yaml")),
    ({}, "linux", Path.home() / ".config" / "ufo_mobile" / "config.yaml"),
    ({}, "darwin", Path.home() / "Library" / "Application Support" / "ufo_mobile" / "config.yaml"),
    ({"APPDATA": "/appdata"}, "win32", Path("/appdata") / "ufo_mobile" / "config.yaml"),
])
def test_where_the_user_config_is(env: dict[str, str], platform: str, expected: Path) -> None:
    assert user_config_path(env, platform) == expected


def test_the_settings_find_the_shipped_defaults_themselves() -> None:
    assert SHIPPED_DEFAULTS == DEFAULT_CONFIG


def test_layers_lowest_first(user_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user_config.write_text("model: {kind: openai, name: from-user}\nlimits: {max_steps: 3, step_timeout_seconds: 9}\n"
                           "agent: {history_steps: 2}\nmode: reasoning\n")
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "default.yaml").write_text("limits: {max_steps: 4}\nagent: {history_steps: 3}\n")
    (folder / "task.yaml").write_text("task: t\nagent: {history_steps: 5}\n")
    monkeypatch.setenv("UFO_MOBILE_MODEL", "from-env")
    loaded = load_task(folder / "task.yaml", overrides={"mode": "codeact"})
    settings = loaded.settings
    assert settings.model.kind == "openai" and settings.model.name == "from-env"
    assert (settings.limits.max_steps, settings.limits.step_timeout_seconds) == (4, 9)
    assert settings.agent.history_steps == 5 and settings.mode == "codeact"
    assert loaded.source_of("model.kind") == f"user config {user_config}"
    assert loaded.source_of("model.name") == "environment UFO_MOBILE_MODEL"
    assert loaded.source_of("limits.max_steps") == f"defaults file {folder / 'default.yaml'}"
    assert loaded.source_of("agent.history_steps") == f"task file {folder / 'task.yaml'}"
    assert loaded.source_of("mode") == "command line"
    assert loaded.source_of("perception.annotate") == "shipped default"
    assert not loaded.device_named


def test_a_shipped_task_keeps_the_user_config_over_the_shipped_defaults(user_config: Path) -> None:
    user_config.write_text("agent: {history_steps: 2}\ndevice: {kind: adb}\n")
    loaded = load_task(TASKS_DIR / "demo.yaml")
    assert loaded.settings.agent.history_steps == 2  # the shipped default.yaml next to it is the bottom layer
    assert loaded.settings.device.kind == "sim"  # the demo names the simulated phone


def test_a_user_config_error_is_one_line_naming_the_file_line_and_key(user_config: Path) -> None:
    user_config.write_text("model:\n  kind: openai\n  nmae: x\n")
    with pytest.raises(ConfigError) as caught:
        load_goal("Turn on Wi-Fi")
    assert str(caught.value) == f"{user_config}:3: model.nmae: unknown key"
    user_config.write_text("model: {kind: openai}\nlimits: {max_steps: 0}\n")
    with pytest.raises(ConfigError, match=r"config.yaml:2: limits.max_steps: "):
        load_goal("Turn on Wi-Fi")


def test_relative_paths_in_the_user_config_are_its_own(user_config: Path) -> None:
    user_config.write_text("model: {kind: scripted, script: replies.yaml}\n")
    assert load_goal("g").settings.model.script == user_config.parent / "replies.yaml"


def test_a_missing_user_config_is_no_layer(user_config: Path, tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text("task: t\nmodel: {kind: openai}\n")
    assert "user config" not in " ".join(load_task(task).layers)


def test_environment_variables(user_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user_config.write_text("model: {kind: azure}\n")
    monkeypatch.setenv("UFO_MOBILE_BASE_URL", "https://r.openai.azure.com")
    monkeypatch.setenv("UFO_MOBILE_DEVICE", "R58M41")
    settings = load_goal("g").settings
    assert settings.model.azure_endpoint == "https://r.openai.azure.com" and settings.model.base_url is None
    assert (settings.device.kind, settings.device.serial) == ("adb", "R58M41")
    assert load_goal("g").device_named
    monkeypatch.setenv("UFO_MOBILE_DEVICE", "sim")
    assert load_goal("g").settings.device.kind == "sim"
    monkeypatch.setenv("UFO_MOBILE_PROVIDER", "bard")
    with pytest.raises(ConfigError, match=r"^UFO_MOBILE_PROVIDER: 'bard' is not a provider"):
        load_goal("g")


def test_a_serial_the_user_wrote_drives_the_phone_over_adb(user_config: Path) -> None:
    user_config.write_text("model: {kind: openai}\ndevice: {serial: emulator-5554}\n")
    settings = load_goal("g").settings
    assert (settings.device.kind, settings.device.serial) == ("adb", "emulator-5554")
    user_config.write_text("model: {kind: openai}\ndevice: {kind: u2, serial: emulator-5554}\n")
    assert load_goal("g").settings.device.kind == "u2"


def test_a_task_file_without_a_user_config_loads_as_before(tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text("task: t\nmodel: {kind: openai}\n")
    settings = load_settings(task)
    assert settings.model.name == "gpt-4o" and settings.device.kind == "sim" and settings.limits.max_steps == 20


def test_config_shows_the_settings_in_force_and_their_sources(user_config: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    user_config.write_text("model:\n  kind: openai_compatible\n  base_url: http://me:pw@localhost:11434/v1?k=1\n"
                           "  api_key: ${MY_KEY}\n")
    monkeypatch.setenv("MY_KEY", "sk-very-secret")
    monkeypatch.setenv("UFO_MOBILE_MODEL", "llama3.1:8b")
    code, out = run_cli("config", "--mode", "reasoning")
    assert code == 0, out
    lines = out.splitlines()
    assert f"# user config: {user_config}" in lines
    assert f'model.kind: "openai_compatible"  # user config {user_config}' in lines
    assert 'model.name: "llama3.1:8b"  # environment UFO_MOBILE_MODEL' in lines
    assert 'mode: "reasoning"  # command line' in lines
    assert 'limits.max_steps: 20  # shipped default' in lines
    assert 'model.base_url: "http://localhost:11434/v1"  # ' + f"user config {user_config}" in lines
    assert "sk-very-secret" not in out and "pw@" not in out
    assert f"model.api_key: ********  # user config {user_config}" in lines
    assert not any(line.startswith("task.") for line in lines)


def test_config_with_no_model_says_how_to_name_one() -> None:
    code, out = run_cli("config")
    assert code == 0
    assert out.splitlines()[-1].startswith("# no model yet: name one in your user config")


def test_config_of_a_task_and_an_error(user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli("config", "--task", "demo", "--device", "R58M41")
    assert code == 0
    assert 'device.kind: "adb"  # command line' in out.splitlines()  # as run --device turns the demo's sim
    assert 'task.text: "Turn on Wi-Fi"' in out
    user_config.write_text("model: {kind: openai}\nlimits: {max_stepz: 1}\n")
    assert run_cli("config")[0] == 2
    assert capsys.readouterr().err.strip() == f"error: {user_config}:2: limits.max_stepz: unknown key"


def test_config_init_writes_a_starter_and_never_overwrites(user_config: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    user_config.parent.rmdir()
    code, out = run_cli("config", "--init")
    assert code == 0 and out.startswith(f"wrote {user_config}")
    assert user_config.read_text() == STARTER
    loaded = load_goal("Turn on Wi-Fi")  # the starter loads: an openai model, the simulated phone
    assert loaded.settings.model.kind == "openai" and loaded.settings.device.kind == "sim"
    user_config.write_text("# mine\n")
    assert run_cli("config", "--init")[0] == 2
    assert "already exists" in capsys.readouterr().err
    assert user_config.read_text() == "# mine\n"
