"""``python -m ufo_mobile eval``: the suite run from the command line with the oracle, the give-up model
and a real model client over HTTP; results written as JSONL with a summary; two evaluations compared;
every bad input one line and exit 2; a stopped evaluation keeps what it did."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.openai_server import OpenAIServer, chat
from tests.unit.eval.conftest import SUITE, suite_tasks
from tests.unit.test_cli_runs import run_cli
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.eval.campaign import Campaign, plan
from ufo_mobile.eval.results import read_results
from ufo_mobile.eval.runner import default_settings

PICK = "shop-*,clock-impossible-delete,settings-connected-network"


@pytest.fixture
def fast_config(tmp_path: Path) -> Path:
    """Defaults without the pixel work (checks look at the phone's state only) and without the report."""
    path = tmp_path / "fast.yaml"
    path.write_text("logs: {report: false}\nperception: {annotate: false, settle_timeout_seconds: 0}\n")
    return path


def the_eval_dir(log_dir: Path) -> Path:
    (directory,) = [p for p in log_dir.iterdir() if p.name.startswith("eval-")]
    return directory


def picked_ids() -> list[str]:
    import fnmatch

    return [t.id for t in suite_tasks() if any(fnmatch.fnmatchcase(t.id, p) for p in PICK.split(","))]


def test_oracle_passes_give_up_fails_and_the_two_compare(tmp_path: Path, fast_config: Path) -> None:
    ids = picked_ids()
    code, out = run_cli("eval", str(SUITE), "--tasks", PICK, "--model", "oracle", "--repeat", "2", "--parallel", "2",
                        "--config", str(fast_config), "--log-dir", str(tmp_path / "a"), "--quiet")
    assert code == 0, out
    assert "eval: " not in out and "[1/" not in out  # --quiet: no header, no line per run
    oracle_dir = the_eval_dir(tmp_path / "a")
    records = read_results(oracle_dir)
    assert sorted((r["task_id"], r["seed"], r["repeat"]) for r in records) == sorted(
        (i, seed, seed) for i in ids for seed in (0, 1))
    assert all(r["passed"] and r["model"] == "oracle" and r["mode"] == "direct" for r in records)
    assert {Path(r["run_dir"]).parent for r in records} == {oracle_dir / "runs"}
    assert len(list((oracle_dir / "runs").iterdir())) == len(records)
    summary = json.loads((oracle_dir / "summary.json").read_text())
    assert (summary["runs"], summary["passed"], summary["runs_per_task"]) == (2 * len(ids), 2 * len(ids), 2)
    assert summary["pass_at"] == {"pass@1": 1.0, "pass@2": 1.0}
    assert f"success rate: {2 * len(ids)}/{2 * len(ids)} runs (100.0%); pass@1 1.000; pass@2 1.000" in out
    assert "shop-checkout" in out and f"results: {oracle_dir / 'results.jsonl'}" in out
    # an oracle run names its script in its settings, as any scripted run does
    run = json.loads((Path(records[0]["run_dir"]) / "run.json").read_text())
    assert run["settings"]["model"]["script"].endswith(f"scripts/{records[0]['task_id']}.yaml")

    code, out = run_cli("eval", str(SUITE), "--tasks", PICK, "--model", "give-up", "--config", str(fast_config),
                        "--log-dir", str(tmp_path / "b"))
    assert code == 0, out
    assert out.startswith("eval: ")
    give_up_dir = the_eval_dir(tmp_path / "b")
    verdicts = {r["task_id"]: (r["kind"], r["passed"]) for r in read_results(give_up_dir)}
    assert verdicts == {i: (kind, kind == "impossible") for i, (kind, _) in verdicts.items()}
    assert sorted(verdicts) == sorted(ids)
    assert f"[{len(ids)}/{len(ids)}]" in out  # one progress line per run
    assert "not passed: shop-price s0: the run ended in FAIL (\"giving up\"), with no answer" in out

    code, out = run_cli("eval", "--compare", str(oracle_dir), str(give_up_dir / "results.jsonl"))
    assert code == 0, out
    feasible = sum(1 for kind, _ in verdicts.values() if kind != "impossible")
    assert f"tasks: 0 better, {feasible} worse" in out
    assert f"success rate: A 100.0% ({2 * len(ids)}/{2 * len(ids)}) -> B " in out


@pytest.mark.parametrize(("fmt", "source"), [("autoglm", "both"), ("json", "screenshot"), ("ui-tars", "screenshot")])
def test_the_oracle_and_give_up_answer_in_the_format_asked_for(tmp_path: Path, fmt: str, source: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"logs: {{report: false}}\nperception: {{source: {source}, settle_timeout_seconds: 0}}\n")
    tasks = "shop-add-to-cart,settings-impossible-network"
    code, out = run_cli("eval", str(SUITE), "--tasks", tasks, "--model", "oracle", "--format", fmt,
                        "--config", str(config), "--log-dir", str(tmp_path / "a"), "--quiet")
    assert code == 0, out
    records = read_results(the_eval_dir(tmp_path / "a"))
    assert [(r["task_id"], r["passed"], r["format"]) for r in records] == [
        ("settings-impossible-network", True, fmt), ("shop-add-to-cart", True, fmt)]
    replies = [(Path(records[1]["run_dir"]) / "steps" / f"{n:04d}" / "reply.txt").read_text() for n in (1, 2)]
    if fmt == "json":  # no control list to number: the oracle taps by point
        assert '"click_at"' in replies[1]
    else:
        assert replies[0].startswith("<think>") if fmt == "autoglm" else replies[0].startswith("Thought: ")
    code, out = run_cli("eval", str(SUITE), "--tasks", tasks, "--model", "give-up", "--format", fmt,
                        "--config", str(config), "--log-dir", str(tmp_path / "b"), "--quiet")
    assert code == 0, out
    assert [(r["passed"], r["status"]) for r in read_results(the_eval_dir(tmp_path / "b"))] == [
        (True, "FAIL"), (False, "FAIL")]


def test_a_real_model_over_http_is_scored_with_its_tokens_and_cost(tmp_path: Path, fast_config: Path) -> None:
    task = next(t for t in suite_tasks() if t.id == "settings-connected-network")
    instance = task.instantiate(0)
    assert instance.oracle is not None
    with OpenAIServer() as server:
        server.push(*(chat(json.dumps(reply), prompt_tokens=1000, completion_tokens=50)
                      for reply in instance.oracle.replies))
        code, out = run_cli("eval", str(task.source), "--provider", "openai_compatible", "--base-url", server.url,
                            "--model", "gpt-4o", "--config", str(fast_config), "--log-dir", str(tmp_path))
    assert code == 0, out
    (record,) = read_results(the_eval_dir(tmp_path))
    steps = len(instance.oracle.replies)
    assert (record["passed"], record["steps"], record["model"]) == (True, steps, "openai_compatible:gpt-4o")
    assert (record["prompt_tokens"], record["completion_tokens"]) == (1000 * steps, 50 * steps)
    assert record["cost_usd"] > 0
    assert f"{1050 * steps:,}" in out and "success rate: 1/1 runs (100.0%)" in out


@pytest.mark.parametrize(("args", "message"), [
    (["eval"], "suite: give a suite folder"),
    (["eval", "no/such/suite"], "no/such/suite: no such suite folder or task file"),
    (["eval", str(SUITE), "--tasks", "nothing-*", "--model", "oracle"], "--tasks: no task id matches"),
    # one pattern of several that names nothing is a typo, not a smaller evaluation
    (["eval", str(SUITE), "--tasks", "settings-dark-theme,messages-reply-last", "--model", "oracle"],
     "--tasks: no task id matches 'messages-reply-last' (did you mean messages-"),
    (["eval", str(SUITE)], "--model: eval needs a model: --model oracle, --model give-up, or a real model"),
    (["eval", str(SUITE), "--model", "oracle", "--provider", "openai"], "--model: --model oracle is built in"),
    (["eval", str(SUITE), "--model", "oracle", "--mode", "reasoning"],
     "scripts/browser-library-hours.yaml: modes: the oracle script has no replies for the reasoning mode"),
    (["eval", str(SUITE), "--compare", "a", "b"], "--compare: give a suite to run, or --compare A B, not both"),
    (["eval", "--compare", "missing-a", "missing-b"], "missing-a: cannot read the results"),
    (["eval", str(SUITE), "--repeat", "0"], "argument --repeat: must be positive, not 0"),
    (["eval", str(SUITE), "--min-success", "2"], "argument --min-success: must be between 0 and 1"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # relative paths in the cases resolve here; nothing is written
    args = [a if a != str(SUITE) else str(SUITE) for a in args]
    with pytest.raises(SystemExit) if message.startswith("argument") else _no_raise() as exited:
        code, _ = run_cli(*args)
    if exited is not None:
        code = exited.value.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not list(tmp_path.glob("logs/*")), "a bad command must not create an evaluation directory"


class _no_raise:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_min_success_fails_the_command_below_the_rate(tmp_path: Path, fast_config: Path) -> None:
    code, out = run_cli("eval", str(SUITE), "--tasks", "shop-price,shop-impossible-gadget", "--model", "give-up",
                        "--min-success", "0.9", "--config", str(fast_config), "--log-dir", str(tmp_path))
    assert code == 1 and "success rate below --min-success 0.9" in out


async def test_a_stopped_campaign_interrupts_its_runs_and_keeps_their_records(tmp_path: Path) -> None:
    """Ctrl-C: the runs in flight end in FAIL("interrupted") with their record written; no new run starts."""
    tasks = [t for t in suite_tasks() if t.kind == "feasible"][:3]
    release = asyncio.Event()
    never = Script(replies=[{"status": "FAIL", "result": "never reached"}])
    seen: list[dict[str, Any]] = []
    campaign = Campaign(plan(tasks), settings=default_settings(), log_dir=tmp_path, parallel=2,
                        on_record=seen.append)

    class Blocking(ScriptedModel):
        async def complete(self, *args: Any, **kwargs: Any) -> Any:
            release.set()
            await asyncio.Event().wait()  # until the run is interrupted

    campaign.model_for = lambda instance: Blocking(never)  # type: ignore[method-assign]
    running = asyncio.ensure_future(campaign.run())
    await asyncio.wait_for(release.wait(), 60)
    campaign.stop("interrupted", signal.SIGINT)
    records = await asyncio.wait_for(running, 60)
    assert campaign.stopped == "interrupted" and campaign.stop_signal == signal.SIGINT
    assert 1 <= len(records) <= 2
    assert sorted(r["task_id"] for r in records) == sorted(r["task_id"] for r in seen)  # seen: in the order they ended
    for r in records:
        assert (r["status"], r["reason"], r["passed"]) == ("FAIL", "interrupted", False)
        assert (r["interrupted"], r["signal"], r["outcome"]) == (True, "SIGINT", "interrupted")
        assert json.loads((Path(r["run_dir"]) / "run.json").read_text())["status"] == "FAIL"
    assert tasks[2].id not in {r["task_id"] for r in records}


async def test_a_campaign_whose_runs_cannot_be_written_stops_and_says_why(tmp_path: Path) -> None:
    """A run directory that cannot be made (here: under a file; a full disk alike) stops the campaign
    with the first write error; no run has a record, and no more runs start."""
    (tmp_path / "a-file").write_text("")
    seen: list[dict[str, Any]] = []
    tasks = [t for t in suite_tasks() if t.kind == "feasible"][:3]
    campaign = Campaign(plan(tasks), settings=default_settings(), log_dir=tmp_path / "a-file" / "runs",
                        builtin="give-up", on_record=seen.append)
    assert await asyncio.wait_for(campaign.run(), 60) == [] and seen == []
    assert campaign.write_error is not None and campaign.write_error.errno == errno.ENOTDIR
    assert campaign.stopped == f"cannot write the evaluation's directory: {os.strerror(errno.ENOTDIR)}"
    assert campaign.stop_signal is None
