"""Writes a step's bundle to the run directory. Runs in the processor's ``finally``.

The step's pictures (``annotated.jpg``, and the small copies the report uses, kept in memory by the
writer) were made by the model phase before it asked the model (``Observation.make_pictures``);
the recorder makes them itself only for a step that never got that far, then drops the pixels.

When a file cannot be written (a full disk), the step ends in FAIL with that reason, the files
that could not be written are left out (never half-written), and the step's line is still
appended to ``steps.jsonl`` from the writer's reserve.

The files are written by a writing thread while the step waits (``ufo_mobile/core/trace/off_loop.py``):
on a busy disk a step's writes can take tens of milliseconds, and on the event loop they would hold
up every other run of the process (a batch's phones). A step cancelled while it is being recorded
is still recorded whole before the cancellation goes on.
"""

from __future__ import annotations

from typing import Any

from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.core.trace.off_loop import written
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.core.ui.screen_images import RecordImages, ScreenImages
from ufo_mobile.errors import RunWriteError

REASK_SEPARATOR = "\n\n----- re-ask -----\n\n"


def outcome_of(ctx: StepContext) -> dict[str, Any]:
    """``result.json`` of a step that ran no action: how it ended (FINISH's answer, FAIL's reason)."""
    ended = {MobileAgentStatus.FINISH: True, MobileAgentStatus.FAIL: False}
    success = ended.get(MobileAgentStatus(ctx.status)) if ctx.status in set(MobileAgentStatus) else None
    return {"success": success, "summary": ctx.reason or ctx.error or "", "status": ctx.status, "action": None}


class StepRecorder:
    """Records each step into ``writer``, or, without one, into its run's (``StepContext.run``)."""

    def __init__(self, writer: RunWriter | None = None, *, annotate: bool = True) -> None:
        self.writer = writer
        self.annotate = annotate

    async def __call__(self, ctx: StepContext) -> None:
        """Record the step in a writing thread (``trace/off_loop.py``); a cancelled step is still
        recorded whole before the cancellation goes on."""
        await written(self.record, ctx)

    def record(self, ctx: StepContext) -> None:
        if ctx.status == MobileAgentStatus.CONFIRM and ctx.failed_phase is None:
            return  # the step waits for a person's approval and goes on: it is written when it ends
        writer = self.writer if self.writer is not None else ctx.writer()
        if writer is None:
            raise ValueError("a step outside a run has no run directory to be recorded in")
        folder = f"steps/{ctx.step:04d}"
        files: dict[str, str] = {}

        def put(name: str, content: Any) -> None:
            try:
                writer.write_file(f"{folder}/{name}", content)
            except RunWriteError:
                return  # the writer keeps the failure; the step fails below
            files[name.split(".")[0]] = f"{folder}/{name}"

        obs = ctx.observation
        if obs is not None:
            if obs.screenshot:  # none is taken with perception.source: dump
                put("screenshot.png", obs.screenshot)
            if writer.failure is None and obs.screenshot:
                self._pictures(writer, folder, obs, files)
            put("controls.json", [obs.ui_state.get_element_info(c.index) for c in obs.ui_state.elements])
            put("screen.txt", obs.ui_state.formatted_text)
        if ctx.messages:
            put("prompt.json", [m.to_log() for m in ctx.messages])
        if ctx.raw_replies:
            put("reply.txt", REASK_SEPARATOR.join(ctx.raw_replies))
        if ctx.reply is not None:
            put("action.json", ctx.reply.model_dump(mode="json"))
        put("result.json", ctx.result.to_dict() if ctx.result is not None else outcome_of(ctx))
        # the shared state after the step: what ``run --resume`` continues from
        put("state.json", ctx.shared.model_dump(mode="json", exclude={"message_history"}))
        if ctx.model_calls:
            put("model.json", {"usage": ctx.usage.to_dict(), "calls": ctx.model_calls})
        put("timings.json", ctx.timings)
        failure = writer.failure  # also one from an earlier step's write
        if failure is not None and ctx.status != MobileAgentStatus.FAIL:
            ctx.fail(str(failure))
        line = self.line(ctx, files)
        line["write_error"] = str(failure) if failure is not None else None
        writer.append_step(line)

    def _pictures(self, writer: RunWriter, folder: str, obs: Observation, files: dict[str, str]) -> None:
        """``annotated.jpg`` (when marks are recorded), and the small copies the report uses."""
        try:
            pictures = _record_images(obs, self.annotate)
        except Exception as exc:  # noqa: BLE001 - a picture must never take the run down
            if self.annotate:
                _write_quietly(writer, f"{folder}/annotated.jpg.error.txt", f"{type(exc).__name__}: {exc}\n")
            return
        if "screenshot" in files:
            writer.keep_thumbnail(files["screenshot"], pictures.clean, pictures.size)
        if pictures.annotated is None or pictures.thumbnail is None:
            return
        path = f"{folder}/annotated.jpg"
        if _write_quietly(writer, path, pictures.annotated):
            files["annotated"] = path
            writer.keep_thumbnail(path, pictures.thumbnail, pictures.size)

    @staticmethod
    def line(ctx: StepContext, files: dict[str, str]) -> dict[str, Any]:
        obs = ctx.observation
        return {
            "step": ctx.step,
            "agent": ctx.agent_name,
            "state": ctx.state,
            "status": ctx.status,
            "reason": ctx.reason,
            "observation_id": obs.observation_id if obs else None,
            "current_app": obs.current_app.package if obs else None,
            "controls": len(obs.ui_state.elements) if obs else 0,
            "dump_attempts": obs.dump_attempts if obs else 0,
            "dump_refusals": obs.dump_refusals if obs else [],
            "observation_fallback": obs.fallback if obs else None,
            "current_app_source": obs.current_app_source if obs else None,
            "screenshot_blocked": obs.screenshot_blocked if obs else False,
            "stability": obs.stability if obs else None,
            "model_image": {"scale": round(obs.model_image_scale, 4), "sent": obs.model_image_size is not None}
            if obs else None,
            "cache": ctx.cache,
            "thought": ctx.reply.thought if ctx.reply else None,
            "action": ctx.action.model_dump(mode="json") if ctx.action else None,
            "actions": [a.model_dump(mode="json") for a in ctx.actions] if len(ctx.actions) > 1 else None,
            "outcomes": [o.model_dump(mode="json") for o in ctx.outcomes] if len(ctx.outcomes) > 1 else None,
            "confirmation": ctx.extra.get("confirmation"),
            "result": ctx.result.to_dict() if ctx.result else None,
            "parse_errors": ctx.parse_errors,
            "error": ctx.error,
            "failed_phase": ctx.failed_phase,
            "timings": {k: round(v, 4) for k, v in ctx.timings.items()},
            "usage": ctx.usage.to_dict(),
            "model_calls": ctx.model_calls,
            "files": files,
        }


def _record_images(obs: Observation, annotate: bool) -> RecordImages:
    """The record's pictures of ``obs``: made already when the step reached the model, else here."""
    images = obs.images if obs.images is not None else ScreenImages(obs.screenshot, obs.ui_state.elements)
    try:
        return images.record(annotated=annotate and obs.record_marks)
    finally:
        images.release()  # nothing more is drawn from this screen: its pixels can go


def _write_quietly(writer: RunWriter, relative: str, content: bytes | str) -> bool:
    """Write one file; False when it could not be (the writer keeps the failure: the step fails)."""
    try:
        writer.write_file(relative, content)
    except RunWriteError:
        return False
    return True
