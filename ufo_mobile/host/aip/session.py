"""One TASK of the task service run as an ordinary ``Session`` on one phone.

The run directory is a ``run``'s (``run.json``, ``steps/``, ``report.html``), under the service's log
directory. ``SessionRunner`` reports the run's start and each step as it ends (``emit``), and returns
the end payload that becomes TASK_END's ``result``. Every text that came from the model, the screen or
the task is redacted by the run's own redactor (it knows the run's secrets) and bounded; JSON escapes
the rest. ``note_in_record`` adds what the service knows after a run's end (its client went away) to
``run.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ufo_mobile.core import builder
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.session import RunControl, RunResult, Session
from ufo_mobile.core.trace.files import write_atomic
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.fleet.devices import Phone
from ufo_mobile.safe_text import cut_to
from ufo_mobile.settings import Settings

TEXT_LIMIT = 1_000
FINISH, FAIL = "FINISH", "FAIL"
Emit = Callable[[str, dict[str, Any]], None]


def settings_on(settings: Settings, phone: Phone, log_dir: Path, driver: str | None) -> Settings:
    """``settings`` for a run on ``phone`` writing under ``log_dir`` (as ``batch`` places a run)."""
    return builder.placed(settings, phone.device_overrides(settings.device.kind, driver), log_dir)


def _bounded(text: str | None) -> str | None:
    if not text:
        return None
    return cut_to(text, TEXT_LIMIT)


def step_payload(session: Session, phone: Phone, step: StepContext, annotate: bool) -> dict[str, Any]:
    """A step event's ``result``: state, action, outcome, timings and the step's screenshots on disk
    (both written before the event is sent)."""
    redact = session.redactor.text
    obs, result = step.observation, step.result
    folder = session.run_dir / "steps" / f"{step.step:04d}" if session.run_dir is not None else None
    annotated = folder / "annotated.jpg" if folder is not None and obs is not None and annotate else None
    return {
        "event": "step",
        "phone": phone.name,
        "run_id": session.run_id,
        "step": step.step,
        "agent": step.agent_name,
        "state": str(step.state),
        "status": str(step.status),
        "thought": _bounded(redact(step.reply.thought)) if step.reply is not None else None,
        "action": None if step.action is None else {"name": step.action.name,
                                                    "text": _bounded(redact(step.action.render()))},
        "outcome": None if result is None else {"success": result.success, "summary": _bounded(redact(result.summary))},
        "reason": _bounded(redact(step.reason)),
        "error": _bounded(redact(step.error or "")),
        "timings": {name: round(seconds, 4) for name, seconds in step.timings.items()},
        "current_app": obs.current_app.package if obs is not None else None,
        "screenshot": str(folder / "screenshot.png") if folder is not None and obs is not None else None,
        "annotated_screenshot": str(annotated) if annotated is not None else None,
        "annotated_screenshot_url": annotated.as_uri() if annotated is not None else None,
    }


def end_payload(result: RunResult, phone: Phone) -> dict[str, Any]:
    """TASK_END's ``result`` for a run that ended (FINISH or FAIL): ``run.json``'s outcome, the
    phone and where the report is."""
    data = result.to_json()
    report = result.run_dir / "report.html"
    data.update(phone=phone.name, report=str(report) if report.is_file() else None)
    return data


def failed_payload(phone: Phone | None, reason: str, *, run_id: str | None = None,
                   run_dir: Path | None = None) -> dict[str, Any]:
    """TASK_END's ``result`` for a task that did not run to an end of its own (did not load, was
    refused, was not started, crashed)."""
    return {"status": FAIL, "outcome": "failed", "reason": reason, "answer": "", "steps": 0, "cost_usd": None,
            "prompt_tokens": 0, "completion_tokens": 0, "run_id": run_id,
            "run_dir": str(run_dir) if run_dir is not None else None, "report": None,
            "phone": phone.name if phone is not None else None, "interrupted": False, "signal": None}


def note_in_record(run_dir: str | Path | None, key: str, value: dict[str, Any]) -> bool:
    """Add ``key: value`` to an ended run's ``run.json`` (replaced atomically); False when there is no
    readable ``run.json`` to add it to (a task that never ran)."""
    if run_dir is None:
        return False
    path = Path(run_dir) / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            return False
        data[key] = value
        write_atomic(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), sync=True)
    except (OSError, ValueError, RunWriteError):
        return False
    return True


class SessionRunner:
    """Runs a task's settings on a phone as a ``Session``; never raises for the run's own failures."""

    def __init__(self, log_dir: Path, driver: str | None = None) -> None:
        self.log_dir = log_dir
        self.driver = driver

    async def __call__(self, settings: Settings, phone: Phone, control: RunControl, emit: Emit) -> dict[str, Any]:
        started = time.monotonic()
        try:
            on_phone = settings_on(settings, phone, self.log_dir, self.driver)
            session = Session(on_phone)
        except ConfigError as exc:  # a credential the settings name is missing, say
            return failed_payload(phone, f"the task does not load here: {exc}")

        def on_start(run: Session) -> None:
            control.started(run)
            emit("started", {"event": "started", "phone": phone.name, "run_id": run.run_id,
                             "run_dir": str(run.run_dir) if run.run_dir is not None else None})

        def on_step(step: StepContext) -> None:
            try:
                payload = step_payload(session, phone, step, on_phone.perception.annotate)
            except Exception as exc:  # noqa: BLE001 - telling the step must never end the run
                payload = {"event": "step", "phone": phone.name, "step": step.step, "status": str(step.status),
                           "error": f"the step event could not be made: {exc!r}"}
            emit("step", payload)

        session.on_start = on_start
        session.on_step = on_step
        try:
            result = await session.run()
        except ConfigError as exc:  # no run directory: the model's script, a custom tool, the log directory
            reason = f"the task does not load here: {exc}"
        except RunWriteError as exc:  # the run could not record its end
            reason = str(exc)
        except Exception as exc:  # noqa: BLE001 - a crash ends this task (run.json says so), not the service
            reason = f"internal error: {exc!r}"
        else:
            return end_payload(result, phone)
        payload = failed_payload(phone, session.redactor.text(reason), run_id=session.run_id or None,
                                 run_dir=session.run_dir)
        payload["duration_seconds"] = round(time.monotonic() - started, 3)
        return payload
