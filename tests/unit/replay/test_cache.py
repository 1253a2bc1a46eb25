"""The run cache: a finished run saves its trajectory, the next run of the same task replays it without a
model and falls back to the agent where the screen differs; never a secret in it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.unit.replay.helpers import (
    APPS,
    NoCalls,
    click,
    demo_settings,
    finish,
    phone_with,
    run_json,
    scripted,
    settings_app,
    wifi_on,
)
from ufo_mobile.core.device.factory import build_sim_phone
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.replay.cache import RunCache, cache_key, not_cacheable
from ufo_mobile.replay.trajectory import load_trajectory
from ufo_mobile.settings import Settings, load_settings

PIN = "73-secret-19"


def cached(log_dir: Path, cache: Path, **overrides: Any) -> Settings:
    return demo_settings(log_dir, replay={"cache_dir": str(cache)}, **overrides)


def files_in(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir())


def test_the_key_is_the_task_the_mode_and_the_device_kind() -> None:
    key = cache_key("Turn on Wi-Fi", "direct", "sim")
    assert cache_key("  turn on   WI-FI ", "direct", "sim") == key
    assert len({key, cache_key("Turn on Wi-Fi", "reasoning", "sim"), cache_key("Turn on Wi-Fi", "direct", "adb"),
                cache_key("Turn off Wi-Fi", "direct", "sim")}) == 4
    assert re.fullmatch(r"[0-9a-f]{32}", key)  # a hash: the file name does not show the task


async def test_a_finished_run_is_saved_and_the_next_run_replays_it_without_a_model(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = await Session(cached(tmp_path / "logs", cache), device=SimDriver()).run()
    assert first.status == "FINISH" and first.model_calls == 4
    assert first.run_cache is not None and first.run_cache["saved"] and not first.run_cache["hit"]
    (entry,) = files_in(cache)  # one file, written in one rename: no temporary file left beside it
    assert entry == f"{cache_key('Turn on Wi-Fi', 'direct', 'sim')}.json"
    driver, model = SimDriver(), NoCalls()
    second = await Session(cached(tmp_path / "logs", cache), device=driver, model=model).run()
    assert (second.status, second.answer) == ("FINISH", "Wi-Fi is on.") and wifi_on(driver)
    assert model.calls == 0 and second.model_calls == 0
    assert second.replay is not None and second.replay["ended"] == "finished" and second.replay["replayed"] == 4
    assert second.run_cache is not None and second.run_cache["hit"] and not second.run_cache["saved"]
    assert run_json(second.run_dir)["run_cache"] == second.run_cache


async def test_a_changed_screen_falls_back_and_the_cache_learns_the_new_way(tmp_path: Path) -> None:
    cache, logs = tmp_path / "cache", tmp_path / "logs"
    await Session(cached(logs, cache), device=SimDriver()).run()
    redesigned = settings_app(tmp_path, "redesigned")
    driver = phone_with(redesigned)
    model = scripted(click(3, "Network & internet"), click(3, "Use Wi-Fi"), finish("Wi-Fi is on."))
    fell_back = await Session(cached(logs, cache), device=driver, model=model).run()
    assert fell_back.status == "FINISH" and wifi_on(driver) and fell_back.model_calls == 3
    assert fell_back.replay is not None and fell_back.replay["ended"] == "fell back"
    assert fell_back.run_cache is not None and fell_back.run_cache["hit"] and fell_back.run_cache["saved"]
    again, model = phone_with(redesigned), NoCalls()
    replayed = await Session(cached(logs, cache), device=again, model=model).run()
    assert replayed.status == "FINISH" and wifi_on(again) and model.calls == 0


async def test_another_mode_is_another_entry(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    await Session(cached(tmp_path / "logs", cache), device=SimDriver()).run()
    other = await Session(cached(tmp_path / "logs", cache, mode="reasoning"), device=SimDriver()).run()
    assert other.status == "FINISH" and other.replay is None and other.model_calls == 7
    assert len(files_in(cache)) == 2


async def test_a_bad_cache_file_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    path = cache / f"{cache_key('Turn on Wi-Fi', 'direct', 'sim')}.json"
    path.write_text("{not json")
    result = await Session(cached(tmp_path / "logs", cache), device=SimDriver()).run()
    assert result.status == "FINISH" and result.replay is None and result.model_calls == 4
    assert result.run_cache is not None and result.run_cache["saved"]
    assert RunCache(cache).lookup(path.stem).trajectory is not None


async def test_a_run_that_failed_is_not_saved(tmp_path: Path) -> None:
    model = scripted({"status": "FAIL", "thought": "t", "result": "no"})
    result = await Session(cached(tmp_path / "logs", tmp_path / "cache"), device=SimDriver(), model=model).run()
    assert result.run_cache is not None and not result.run_cache["saved"]
    assert result.run_cache["note"] == "not saved: the run did not finish"
    assert not (tmp_path / "cache").exists()


def bank_task(tmp_path: Path) -> Path:
    task = tmp_path / "bank.yaml"
    task.write_text(f"""
task: Sign in to the bank
model: {{script: unused.yaml}}
device: {{sim: {{apps: [{APPS / 'bank.yaml'}], start_app: com.example.bank}}}}
credentials: {{env: {{bank_pin: BANK_PIN}}}}
replay: {{cache_dir: {tmp_path / 'cache'}}}
logs: {{dir: {tmp_path / 'logs'}}}
""")
    return task


def bank_replies(typing: dict[str, Any]) -> ScriptedModel:
    return scripted(click(3, "Sign in"), {"status": "CONTINUE", "thought": "t", "action": typing},
                    click(4, "Continue"), finish("Signed in."))


async def test_a_secret_is_replayed_by_its_id_and_never_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BANK_PIN", PIN)
    settings = load_settings(bank_task(tmp_path))
    secret = {"name": "type_secret", "args": {"secret_id": "bank_pin", "index": 3}}
    first = await Session(settings, device=SimDriver(build_sim_phone(settings.device.sim)),
                          model=bank_replies(secret)).run()
    assert first.status == "FINISH" and first.run_cache is not None and first.run_cache["saved"]
    stored = (tmp_path / "cache" / Path(first.run_cache["file"]).name).read_text()
    assert PIN not in stored and '"secret_id": "bank_pin"' in stored
    phone = build_sim_phone(settings.device.sim)
    model = NoCalls()
    second = await Session(settings, device=SimDriver(phone), model=model).run()
    assert second.status == "FINISH" and model.calls == 0
    assert phone.state("com.example.bank")["pin"] == PIN  # typed again, from the credentials of this run
    assert all(json.loads(line)["result"]["success"] for line in (second.run_dir / "steps.jsonl").read_text()
               .splitlines()[:3])
    steps = [json.loads(line) for line in (second.run_dir / "steps.jsonl").read_text().splitlines()]
    assert steps[1]["action"] == {"name": "type_secret", "args": {"secret_id": "bank_pin", "index": 3},
                                  "confirm": False}


async def test_text_typed_into_a_password_field_is_not_cached(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BANK_PIN", PIN)
    settings = load_settings(bank_task(tmp_path))
    typed = {"name": "type", "args": {"text": "4321", "index": 3}}
    result: RunResult = await Session(settings, device=SimDriver(build_sim_phone(settings.device.sim)),
                                      model=bank_replies(typed)).run()
    assert result.status == "FINISH" and result.run_cache is not None and not result.run_cache["saved"]
    assert result.run_cache["note"] == "not saved: step 2 typed into a password field (its text is not kept)"
    assert not_cacheable(load_trajectory(result.run_dir)) is not None
