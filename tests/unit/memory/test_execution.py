"""The execution state (seed 003): its status methods and how moves, stops and ends change it."""

from __future__ import annotations

from ufo_mobile.core.memory.execution import ExecutionState, ExecutionStatus


def test_a_new_run_is_running_and_nothing_was_asked() -> None:
    e = ExecutionState()
    assert e.is_running() and not e.is_interrupted() and not e.is_stopped_requested()
    assert e.to_json() == {"current_node": "", "current_state": "", "step": 0, "status": "RUNNING",
                           "interrupt_node": "", "interrupt_reason": "", "stop_requested": False}


def test_moves_keep_the_node_and_step_and_a_round_end_decides_the_status() -> None:
    e = ExecutionState()
    e.moved("MobileAgent", "CONTINUE", step=1)
    assert (e.current_node, e.current_state, e.step, e.status) == ("MobileAgent", "CONTINUE", 1, "RUNNING")
    e.moved("MobileAgent", "FINISH", step=2, ends_round=True)
    assert e.status == ExecutionStatus.COMPLETED and not e.is_running()


def test_a_sub_agents_fail_is_not_the_runs() -> None:
    e = ExecutionState()
    e.moved("Executor", "FAIL", step=3, reason="no button", ends_round=False)
    assert e.is_running()
    e.moved("Manager", "FAIL", step=4, reason="gave up", ends_round=True)
    assert e.status == ExecutionStatus.ERROR


def test_a_stop_is_asked_first_and_the_run_ends_interrupted_on_its_reason() -> None:
    e = ExecutionState()
    e.moved("Manager", "CONTINUE", step=2)
    e.request_stop("interrupted")
    e.request_stop("terminated")  # the first reason stays
    assert e.is_stopped_requested() and e.is_running() and not e.is_interrupted()
    assert (e.interrupt_node, e.interrupt_reason) == ("Manager", "interrupted")
    e.moved("Manager", "FAIL", step=2, reason="interrupted", ends_round=True)
    assert e.is_interrupted()


def test_a_stop_asked_too_late_does_not_undo_a_finish_nor_make_another_failure_an_interruption() -> None:
    done, failed = ExecutionState(), ExecutionState()
    for e in (done, failed):
        e.request_stop("interrupted")
    done.end(failed=False)
    failed.end(failed=True, reason="step 2 timed out after 5 s")
    assert (done.status, failed.status) == ("COMPLETED", "ERROR")


def test_an_ended_run_keeps_its_status() -> None:
    e = ExecutionState()
    e.moved("MobileAgent", "FAIL", step=1, reason="cannot", ends_round=True)
    e.moved("MobileAgent", "FINISH", step=1, ends_round=True)  # a host's cleanup move
    e.abandon()
    assert e.status == ExecutionStatus.ERROR and e.current_state == "FINISH"


def test_an_abandoned_run_is_interrupted_at_once() -> None:
    e = ExecutionState()
    e.request_stop("interrupted")
    e.abandon()
    assert e.is_interrupted()
