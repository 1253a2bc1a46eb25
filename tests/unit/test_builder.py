"""What ``ufo_mobile.core.builder`` builds from the settings: the models (one per role), the phone,
the run directory's writer, the root agent with its operator, and a session made of them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.fakes import FakeDriver
from ufo_mobile.core import builder as build
from ufo_mobile.core.agents.human import CallbackOperator
from ufo_mobile.core.agents.mobile import MobileAgent
from ufo_mobile.core.agents.reasoning import ManagerAgent
from ufo_mobile.core.agents.replay import ReplayAgent
from ufo_mobile.core.device.recording import RecordingDriver
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import Session
from ufo_mobile.core.trace.writer import Redactor
from ufo_mobile.errors import ConfigError
from ufo_mobile.replay.plan import ReplayPlan
from ufo_mobile.replay.trajectory import Trajectory
from ufo_mobile.settings import Settings, load_settings
from ufo_mobile.sim.phone.simphone import SimPhone

DONE = {"status": "FINISH", "thought": "done", "result": "done"}


def settings(tmp_path: Path, **more: object) -> Settings:
    (tmp_path / "planner.yaml").write_text(yaml.safe_dump({"replies": [DONE]}))
    (tmp_path / "executor.yaml").write_text(yaml.safe_dump({"replies": [DONE]}))
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({"task": "Open Settings", "mode": "reasoning",
                                    "model": {"kind": "scripted", "script": "planner.yaml", "name": "planner"},
                                    "models": {"executor": {"script": "executor.yaml", "name": "cheap"}},
                                    "logs": {"dir": str(tmp_path / "logs")}, **more}))
    return load_settings(path, env={})


def test_each_role_the_settings_name_gets_a_model_of_its_own(tmp_path: Path) -> None:
    models = build.RunBuilder(settings(tmp_path)).models()
    assert isinstance(models.main, ScriptedModel) and set(models.roles) == {"executor"}
    assert models.roles["executor"] is not models.main
    assert [m.name for m in (models.main, models.roles["executor"])] == ["scripted:planner.yaml",
                                                                         "scripted:executor.yaml"]
    assert models.owned == [models.main, models.roles["executor"]]  # the run closes what it built


def test_a_model_passed_in_is_the_main_one_and_stays_the_callers(tmp_path: Path) -> None:
    mine = ScriptedModel(Script(replies=[DONE]))
    models = build.RunBuilder(settings(tmp_path), model=mine).models()
    assert models.main is mine and mine not in models.owned
    assert list(models.owned) == [models.roles["executor"]]  # a role's model is always the run's own


def test_the_simulated_phone_is_built_from_the_settings_and_its_actions_recorded(tmp_path: Path) -> None:
    builder = build.RunBuilder(settings(tmp_path))
    phone = builder.phone()
    assert isinstance(phone, SimPhone) and builder.owns_device
    writer = builder.new_writer("run", Redactor())
    try:
        device = builder.device(phone, logger=None, writer=writer)
    finally:
        writer.close()
    assert isinstance(device, RecordingDriver)  # device.record_actions is on by default
    assert isinstance(device.inner, SimDriver) and device.inner.phone is phone


def test_a_driver_passed_in_is_driven_and_left_open_for_the_caller(tmp_path: Path) -> None:
    mine = FakeDriver()
    builder = build.RunBuilder(settings(tmp_path, device={"record_actions": False}), device=mine)
    assert builder.phone() is None and not builder.owns_device
    writer = builder.new_writer("run", Redactor())
    try:
        assert builder.device(None, logger=None, writer=writer) is mine
    finally:
        writer.close()


def test_the_writer_takes_the_next_free_name_and_a_bad_log_dir_is_a_config_error(tmp_path: Path) -> None:
    builder = build.RunBuilder(settings(tmp_path))
    first, second = builder.new_writer("same", Redactor()), builder.new_writer("same", Redactor())
    first.close()
    second.close()
    assert (first.run_dir, second.run_dir) == (tmp_path / "logs" / "same", tmp_path / "logs" / "same-2")
    (tmp_path / "file").write_text("not a directory")
    blocked = build.RunBuilder(settings(tmp_path, logs={"dir": str(tmp_path / "file")}))
    with pytest.raises(ConfigError) as info:
        blocked.new_writer("run", Redactor())
    assert info.value.key == "logs.dir"


def test_the_agent_is_the_modes_root_with_the_operator_and_a_replay_in_front(tmp_path: Path) -> None:
    person = CallbackOperator()
    direct = build.RunBuilder(settings(tmp_path, mode="direct"), operator=person)
    agent = direct.agent(FakeDriver(), direct.models().main, replay=None, logger=None, redact=str)
    assert isinstance(agent, MobileAgent) and agent.operator is person
    builder = build.RunBuilder(settings(tmp_path), operator=person)
    model = builder.models().main
    assert isinstance(builder.agent(FakeDriver(), model, replay=None, logger=None, redact=str), ManagerAgent)
    plan = ReplayPlan(Trajectory(run_id="r", task="Open Settings", status="FINISH", steps=[]), fallback="agent")
    replayed = builder.agent(FakeDriver(), model, replay=plan, logger=None, redact=str)
    assert isinstance(replayed, ReplayAgent) and isinstance(replayed.fallback, ManagerAgent)


def test_a_missing_credential_is_a_config_error_before_anything_is_built(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BUILD_TEST_PIN", raising=False)
    with pytest.raises(ConfigError) as info:
        build.RunBuilder(settings(tmp_path, credentials={"env": {"pin": "BUILD_TEST_PIN"}}))
    assert info.value.key == "credentials.env.pin"
    assert not (tmp_path / "logs").exists()


async def test_a_session_is_made_of_the_builders_parts_and_runs(tmp_path: Path) -> None:
    session = Session(settings(tmp_path, mode="direct"), device=FakeDriver(), run_id="built")
    assert isinstance(session.parts, build.RunBuilder)
    result = await session.run()
    assert (result.status, result.run_dir) == ("FINISH", tmp_path / "logs" / "built")
    assert result.usage_by_role["agent"]["model"] == "planner"  # the settings' model, built here


def test_a_session_made_without_parts_is_built_by_the_builder_too(tmp_path: Path) -> None:
    assert isinstance(Session(settings(tmp_path)).parts, build.RunBuilder)


def test_placed_lays_the_phone_and_the_log_dir_over_the_settings(tmp_path: Path) -> None:
    base = settings(tmp_path)
    placed = build.placed(base, {"kind": "adb", "serial": "emulator-5554"}, tmp_path / "elsewhere")
    assert (placed.device.kind, placed.device.serial, placed.logs.dir) == ("adb", "emulator-5554",
                                                                         tmp_path / "elsewhere")
    assert placed.model == base.model and base.device.kind == "sim"


def test_every_agent_of_a_built_run_shares_one_phone_that_redacts_from_the_first_screen(tmp_path: Path) -> None:
    builder = build.RunBuilder(settings(tmp_path))
    manager = builder.agent(FakeDriver(), builder.models().main, replay=None, logger=None,
                            redact=lambda text: text.replace("hunter2", "***"))
    assert isinstance(manager, ManagerAgent) and manager.phone is not None
    assert manager.phone.redacts and manager.phone.redact("pin hunter2") == "pin ***"
    assert manager.executor.phone is manager.phone
