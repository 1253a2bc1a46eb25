"""The shipped suite end to end: every task's oracle solves it (two seeds each), and a model that
gives up at once fails every task that can be done, while giving up is the right answer to every
impossible one (see ``ufo_mobile.eval.spec``). Runs go through ``Session`` on the simulated phone,
in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.eval.conftest import StillSimDriver, suite_tasks
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.errors import ConfigError
from ufo_mobile.eval import give_up_model, oracle_model, run_task
from ufo_mobile.settings import Settings

TASKS = {task.id: task for task in suite_tasks()}
SEEDS = (0, 1)


@pytest.mark.parametrize(("task_id", "seed"), [(task_id, seed) for task_id in TASKS for seed in SEEDS])
async def test_the_oracle_solves_the_task(task_id: str, seed: int, tmp_path: Path, settings: Settings) -> None:
    task = TASKS[task_id]
    instance = task.instantiate(seed)
    outcome = await run_task(instance, log_dir=tmp_path, model=oracle_model(instance), settings=settings,
                             driver=StillSimDriver)
    assert outcome.passed, f"{task_id} (seed {seed}): {outcome.why} [{outcome.status}: {outcome.reason}]"
    assert outcome.status == ("FAIL" if task.kind == "impossible" else "FINISH")
    assert outcome.steps <= task.spec.budget
    assert outcome.run_dir.parent == tmp_path and (outcome.run_dir / "steps.jsonl").is_file()


@pytest.mark.parametrize("task_id", list(TASKS))
async def test_giving_up_fails_what_can_be_done(task_id: str, tmp_path: Path, settings: Settings) -> None:
    task = TASKS[task_id]
    for seed in SEEDS:
        outcome = await run_task(task.instantiate(seed), log_dir=tmp_path, model=give_up_model(),
                                 settings=settings, driver=StillSimDriver)
        assert (outcome.status, outcome.reason, outcome.steps) == ("FAIL", "giving up", 1)
        if task.kind == "impossible":
            assert outcome.passed, outcome.why
            assert outcome.why == 'the agent said FAIL: "giving up"'
        else:
            assert not outcome.passed, f"{task_id} (seed {seed}) passes on the untouched phone: {outcome.why}"


@pytest.mark.parametrize("mode", ["reasoning", "codeact"])
async def test_the_give_up_model_speaks_every_mode(mode: str, tmp_path: Path, settings: Settings) -> None:
    instance = TASKS["settings-impossible-network"].instantiate(0)
    outcome = await run_task(instance, log_dir=tmp_path, model=give_up_model(mode),
                             settings=settings.model_copy(update={"mode": mode}), driver=StillSimDriver)
    assert (outcome.status, outcome.reason, outcome.passed) == ("FAIL", "giving up", True)


async def test_a_limit_is_not_the_agent_saying_fail(tmp_path: Path, settings: Settings) -> None:
    """An impossible task is done by the agent's own FAIL, not by running into a limit."""
    dawdle = Script(replies=[{"status": "CONTINUE", "action": {"name": "system_button", "args": {"button": "home"}}}],
                    repeat_last=True)
    task = TASKS["clock-impossible-delete"]
    outcome = await run_task(task.instantiate(0), log_dir=tmp_path, model=ScriptedModel(dawdle), settings=settings,
                             driver=StillSimDriver)
    assert outcome.status == "FAIL" and not outcome.passed
    assert outcome.why.startswith("the run failed, but not by the agent's own FAIL: ")


async def test_a_feasible_task_is_judged_on_the_state_whatever_the_agent_says(tmp_path: Path,
                                                                             settings: Settings) -> None:
    """The oracle's actions, then FAIL instead of FINISH: the work is done, so the task passes."""
    instance = TASKS["settings-dark-theme"].instantiate(0)
    assert instance.oracle is not None
    replies = [*instance.oracle.replies[:-1], {"status": "FAIL", "result": "not sure it worked"}]
    outcome = await run_task(instance, log_dir=tmp_path, model=ScriptedModel(Script(replies=replies)),
                             settings=settings, driver=StillSimDriver)
    assert (outcome.status, outcome.passed) == ("FAIL", True)


def test_the_suite_covers_the_apps_and_kinds() -> None:
    tasks = list(TASKS.values())
    kinds = [task.kind for task in tasks]
    assert len(tasks) >= 25
    assert kinds.count("impossible") >= 3 and kinds.count("retrieval") >= 3
    apps = {task.spec.app for task in tasks}
    assert apps >= {"com.android.settings", "com.android.contacts", "com.google.android.apps.messaging",
                    "com.example.notes", "com.example.shop", "com.example.clock", "com.example.calendar",
                    "com.example.browser"}
    assert sum(1 for task in tasks if task.spec.params) >= 25


@pytest.mark.parametrize("task_id", list(TASKS))
def test_every_task_ships_an_oracle_within_its_budget(task_id: str) -> None:
    task = TASKS[task_id]
    assert task.oracle_doc is not None, f"{task_id} has no scripts/{task_id}.yaml"
    for seed in SEEDS:
        oracle = task.instantiate(seed).oracle
        assert oracle is not None and len(oracle.replies) <= task.spec.budget


@pytest.mark.parametrize("task_id", [task_id for task_id, task in TASKS.items() if task.spec.params])
def test_seeds_make_variants_and_the_same_seed_the_same_one(task_id: str) -> None:
    task = TASKS[task_id]
    first, again = task.instantiate(3), task.instantiate(3)
    assert (first.text, first.params, first.setup, first.check) == (again.text, again.params, again.setup,
                                                                     again.check)
    assert len({repr(task.instantiate(seed).params) for seed in range(12)}) >= 2


def test_an_oracle_is_asked_for_in_a_mode_it_has_replies_for() -> None:
    instance = TASKS["settings-dark-theme"].instantiate(0)
    with pytest.raises(ConfigError, match=r"scripts/settings-dark-theme\.yaml: modes: the oracle script has no "
                                          "replies for the reasoning mode"):
        oracle_model(instance, "reasoning")
    assert instance.oracle is not None
    assert oracle_model(instance).script.replies == instance.oracle.replies


async def test_a_run_that_stops_for_a_person_is_counted_apart_from_failures(tmp_path: Path,
                                                                            settings: Settings) -> None:
    """Asking the user with nobody there ends the run as needing a person: not passed, and the
    summary counts it on its own line."""
    from ufo_mobile.eval.results import summarize

    ask = {"status": "PENDING", "thought": "which one?", "result": "Which alarm do you mean?"}
    outcome = await run_task(TASKS["clock-turn-off"].instantiate(0), log_dir=tmp_path,
                             model=ScriptedModel(Script(replies=[ask])), settings=settings, driver=StillSimDriver)
    assert (outcome.status, outcome.outcome, outcome.passed) == ("FAIL", "needs_person", False)
    assert "Which alarm do you mean?" in outcome.reason and outcome.steps == 0
    oracle = await run_task(TASKS["clock-turn-off"].instantiate(0), log_dir=tmp_path / "o",
                            model=oracle_model(TASKS["clock-turn-off"].instantiate(0)), settings=settings,
                            driver=StillSimDriver)
    summary = summarize([outcome.to_json(), oracle.to_json()]).to_json()
    assert (summary["passed"], summary["needs_person"], summary["runs"]) == (1, 1, 2)
