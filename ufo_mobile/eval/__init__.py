"""Measuring an agent: a suite of phone tasks with checks on the simulated phone's state.

A suite is a folder of task files (``config/suite``): each task has a text with parameters drawn
from a seeded RNG (``params``), a step budget, the phone's setup, a check on the phone's state or
on the run's answer (``checks``), and an oracle reply script that solves it. ``load_suite`` reads
and checks the files, ``SuiteTask.instantiate(seed)`` makes one variant, and ``run_task`` runs it
on a fresh simulated phone and judges it (``spec.judge``).

Example::

    tasks = load_suite(Path("config/suite"))
    instance = tasks[0].instantiate(seed=1)
    outcome = asyncio.run(run_task(instance, log_dir=Path("logs/eval"), model=oracle_model(instance)))
    print(outcome.passed, outcome.why)
"""

from ufo_mobile.eval.checks import Check, RunFacts, Verdict, evaluate, parse_check
from ufo_mobile.eval.loader import load_suite, load_task
from ufo_mobile.eval.runner import TaskOutcome, build_phone, give_up_model, oracle_model, run_task
from ufo_mobile.eval.spec import SuiteTask, TaskInstance, TaskKind, judge

__all__ = [
    "Check",
    "RunFacts",
    "SuiteTask",
    "TaskInstance",
    "TaskKind",
    "TaskOutcome",
    "Verdict",
    "build_phone",
    "evaluate",
    "give_up_model",
    "judge",
    "load_suite",
    "load_task",
    "oracle_model",
    "parse_check",
    "run_task",
]
