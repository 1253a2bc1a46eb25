from __future__ import annotations

from ufo_mobile.core.memory.records import StepRecord, render_history


def record(step: int, *, ok: bool = True) -> StepRecord:
    return StepRecord(step=step, agent="A", status="CONTINUE", action={"name": "click", "args": {"index": step}},
                      action_text=f"click(index={step})", success=ok, summary=f"tapped {step}",
                      raw_reply=f'{{"step": {step}}}')


def test_record_renders_reply_then_outcome() -> None:
    reply, outcome = record(3, ok=False).to_messages()
    assert (reply.role, reply.text(), reply.id) == ("assistant", '{"step": 3}', "step-3-reply")
    assert outcome.role == "user" and outcome.text() == "Turn 3: action click(index=3) FAILED: tapped 3"


def test_history_is_bounded_and_older_steps_are_summarised() -> None:
    records = [record(i) for i in range(1, 11)]
    messages = render_history(records, limit=3)
    assert messages[0].id == "history-summary"
    assert messages[0].text().count("\n- turn") == 7
    assert [m.id for m in messages[1:]] == [f"step-{i}-{kind}" for i in (8, 9, 10) for kind in ("reply", "outcome")]
    assert render_history(records, limit=0) == []
    assert len(render_history(records[:2], limit=5)) == 4


def test_failed_step_before_acting() -> None:
    r = StepRecord(step=2, agent="A", status="FAIL", error="UIParseError: empty dump")
    (only,) = r.to_messages()
    assert only.text() == "Turn 2 failed before acting: UIParseError: empty dump"
