"""The task service's answers to each AIP message, with connections faked (no network) and a runner the
test ends by hand: registration and identity, a TASK's acknowledgement, events and TASK_END (FAIL is
FAILED), the TASK_ENDs kept for a client that comes back, device info, and errors that leave the
connection usable."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ufo_mobile.core.session import RunControl
from ufo_mobile.fleet.devices import Phone, sim_phones
from ufo_mobile.host.aip.protocol import ClientType, ServerMessage
from ufo_mobile.host.aip.service import ServeOptions, TaskService
from ufo_mobile.host.aip.session import Emit
from ufo_mobile.settings import Settings


class FakePeer:
    """A connection as the service uses it: what it was sent, as the JSON a client reads."""

    def __init__(self, address: str = "127.0.0.1:40000") -> None:
        self.client_id: str | None = None
        self.client_type = ClientType.DEVICE
        self.closed = False
        self.address = address
        self.sent: list[dict[str, Any]] = []

    def post(self, message: ServerMessage, *, droppable: bool = False) -> bool:
        if self.closed:
            return False
        self.sent.append(json.loads(message.to_json()))
        return True

    def take(self) -> list[dict[str, Any]]:
        sent, self.sent = self.sent, []
        return sent


class _Stoppable:
    """A session as ``RunControl`` sees it: a stop opens the gate."""

    def __init__(self, gate: asyncio.Event) -> None:
        self.context = self
        self.gate = gate

    def interrupt(self, reason: str, signum: int | None = None) -> None:
        self.gate.set()

    def abandon(self) -> None:
        self.gate.set()


class GateRunner:
    """Each run makes one step, then waits for ``release`` (or a stop); a task whose text says "fail" ends FAIL."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def __call__(self, settings: Settings, phone: Phone, control: RunControl, emit: Emit) -> dict[str, Any]:
        control.started(_Stoppable(self.gate))  # type: ignore[arg-type]
        emit("started", {"event": "started", "phone": phone.name, "run_dir": f"/runs/{settings.task.text}"})
        emit("step", {"event": "step", "step": 1, "agent": "MobileAgent", "state": "CONTINUE", "status": "CONTINUE"})
        await self.gate.wait()
        if control.stop is not None:
            return {"status": "FAIL", "reason": control.stop[0]}
        if "fail" in settings.task.text:
            return {"status": "FAIL", "reason": "the step limit (1) was reached", "cost_usd": 0.0}
        return {"status": "FINISH", "reason": "done", "answer": "done", "cost_usd": 0.0012}


@pytest.fixture
def service() -> TaskService:
    base = Settings.model_validate({"task": {"text": "-"}, "model": {"script": "s.yaml"}})
    return TaskService(base, sim_phones(2), ServeOptions(device_id="box", queue_limit=1), log=lambda line: None,
                       runner=GateRunner())


async def send(service: TaskService, peer: FakePeer, **message: Any) -> list[dict[str, Any]]:
    await service._on_frame(peer, json.dumps(message))  # type: ignore[arg-type]
    for _ in range(20):  # the runs started by it take their first step (no time passes)
        await asyncio.sleep(0)
    return peer.take()


async def registered(service: TaskService, client_id: str = "galaxy") -> FakePeer:
    peer = FakePeer()
    (reply,) = await send(service, peer, type="register", client_id=client_id, client_type="constellation",
                          target_id="box", status="ok", request_id="reg")
    assert (reply["type"], reply["status"], reply["response_id"]) == ("heartbeat", "ok", "reg")
    assert reply["result"] == {"event": "registered", "device_id": "box", "phones": ["sim-1", "sim-2"], "tasks": []}
    return peer


def release(service: TaskService) -> None:
    runner = service.runs.runner
    assert isinstance(runner, GateRunner)
    runner.gate.set()


async def test_registration_and_identity(service: TaskService) -> None:
    peer = FakePeer()
    (error,) = await send(service, peer, type="task", request="x")
    assert (error["type"], error["status"]) == ("error", "error")
    assert error["error"] == "TASK before REGISTER: register first (type 'register' with a client_id)"
    (error,) = await send(service, peer, type="register", client_id="g", target_id="elsewhere")
    assert error["error"].startswith("target_id 'elsewhere' is neither this device server ('box', --device-id) nor")
    (ok,) = await send(service, peer, type="heartbeat")  # still usable, and a heartbeat needs no registration
    assert (ok["type"], ok["status"]) == ("heartbeat", "ok")
    peer = await registered(service, "g")
    (error,) = await send(service, peer, type="task", client_id="someone-else", request="x")
    assert error["error"] == "client_id 'someone-else' does not match this connection's registration ('g')"
    (error,) = await send(service, FakePeer(), type="register", client_id="g")
    assert error["error"] == "client_id 'g' is already connected"
    (error,) = await send(service, peer, type="command_results", action_results=[])
    assert error["error"].startswith("COMMAND_RESULTS is not expected: this device server runs its tasks itself")
    assert await send(service, peer, type="error", error="client-side trouble") == []  # noted, never echoed


async def test_a_task_is_acknowledged_streams_its_steps_and_ends_completed(service: TaskService) -> None:
    peer = await registered(service)
    ack, started, step = await send(service, peer, type="task", session_id="s1", request_id="r1", task_name="open",
                                    request="open Settings", status="continue")
    assert (ack["type"], ack["status"], ack["session_id"], ack["response_id"]) == ("heartbeat", "ok", "s1", "r1")
    assert ack["result"] == {"event": "accepted", "state": "running", "phone": "sim-1", "queue_position": 0,
                             "waiting_for": None}
    # progress is a HEARTBEAT: a server TASK is AIP's "task assignment to device" (UFO's device client
    # starts a task on each), and a HEARTBEAT with status ok is the answer a registration waits for
    assert (started["type"], started["status"], started["user_request"]) == ("heartbeat", "continue", "open Settings")
    assert started["result"]["run_dir"] == "/runs/open Settings"
    assert (step["type"], step["status"], step["agent_name"], step["result"]["step"]) == (
        "heartbeat", "continue", "MobileAgent", 1)
    release(service)
    await service.runs.drain()
    (end,) = peer.take()
    assert (end["type"], end["status"], end["session_id"], end["response_id"], end["task_name"]) == (
        "task_end", "completed", "s1", "r1", "open")
    assert "error" not in end and end["result"]["cost_usd"] == 0.0012


async def test_a_fail_is_failed_with_its_reason(service: TaskService) -> None:
    peer = await registered(service)
    await send(service, peer, type="task", session_id="s2", request="please fail")
    release(service)
    await service.runs.drain()
    (end,) = peer.take()
    assert (end["type"], end["status"], end["error"]) == ("task_end", "failed", "the step limit (1) was reached")
    assert end["result"]["status"] == "FAIL"


async def test_tasks_that_cannot_run_end_failed_and_a_reused_session_id_is_an_error(service: TaskService) -> None:
    peer = await registered(service)
    (end,) = await send(service, peer, type="task", session_id="m", request="x",
                        metadata={"options": {"model": {"kind": "openai"}}})
    assert (end["type"], end["status"], end["session_id"]) == ("task_end", "failed", "m")
    assert end["error"] == ("the task does not load: metadata.options: model: is the server's to set "
                            "(serve --config), not a task's")
    (end,) = await send(service, peer, type="task", session_id="d", request="x", metadata={"device": "sim-7"})
    assert end["error"] == "the task does not load: no phone 'sim-7' here (phones: sim-1, sim-2)"
    await send(service, peer, type="task", session_id="a", request="x", metadata={"device": "sim-2"})
    (ack,) = await send(service, peer, type="task", session_id="b", request="x", metadata={"device": "sim-2"})
    assert ack["result"] == {"event": "accepted", "state": "queued", "phone": None, "queue_position": 1,
                             "waiting_for": "phone sim-2"}
    assert ack["messages"] == ["queued: place 1 in line, waiting for phone sim-2"]
    (end,) = await send(service, peer, type="task", session_id="c", request="x", metadata={"device": "sim-2"})
    assert end["error"] == ("refused: phone sim-2 is busy (session a), and the waiting line is full (1 tasks, --queue)")
    (error,) = await send(service, peer, type="task", session_id="a", request="again")
    assert (error["type"], error["session_id"]) == ("error", "a")
    assert error["error"] == "session_id 'a' is already running or waiting here; give each TASK its own"
    service.stop("test over")
    await service.runs.drain()


async def test_a_client_that_goes_away_has_its_tasks_cancelled_as_ufo_does(service: TaskService) -> None:
    """UFO's server cancels a disconnected client's sessions and sends no end: the run in flight ends
    FAIL with the reason, the waiting task ends unrun, and no TASK_END waits for the client's return."""
    peer = await registered(service)
    await send(service, peer, type="task", session_id="s", request_id="r", request="open", metadata={"device": "sim-2"})
    await send(service, peer, type="task", session_id="w", request="wait", metadata={"device": "sim-2"})
    peer.closed = True
    service._gone(peer)  # type: ignore[arg-type]
    await service.runs.drain()
    assert service.runs.running == {} and service.runs.waiting == []
    back = FakePeer()
    (reply,) = await send(service, back, type="register", client_id="galaxy")
    assert reply["result"]["tasks"] == []


async def test_the_cancelled_end_says_so(service: TaskService) -> None:
    ends: list[dict[str, Any]] = []
    service.runs.on_event = lambda task, kind, payload: ends.append(payload) if kind == "ended" else None
    peer = await registered(service)
    await send(service, peer, type="task", session_id="s", request="open", metadata={"device": "sim-2"})
    await send(service, peer, type="task", session_id="w", request="wait", metadata={"device": "sim-2"})
    peer.closed = True
    service._gone(peer)  # type: ignore[arg-type]
    await service.runs.drain()
    assert sorted((e["status"], e["reason"]) for e in ends) == [
        ("FAIL", "cancelled: the client disconnected"), ("FAIL", "not run: cancelled: the client disconnected")]


async def test_keep_runs_on_disconnect_lets_them_end_and_keeps_the_task_end(service: TaskService) -> None:
    service.options.keep_runs_on_disconnect = True
    peer = await registered(service)
    await send(service, peer, type="task", session_id="s", request_id="r", request="open")
    peer.closed = True
    service._gone(peer)  # type: ignore[arg-type]
    release(service)
    await service.runs.drain()  # the run ended while nobody listened
    back = FakePeer()
    reply, end = await send(service, back, type="register", client_id="galaxy")
    assert reply["result"]["tasks"] == []
    assert (end["type"], end["status"], end["session_id"], end["response_id"]) == ("task_end", "completed", "s", "r")
    assert end["result"]["client_disconnected"] == {"client_id": "galaxy", "on_disconnect": "kept running"}
    assert await send(service, back, type="heartbeat") != []  # kept ends are sent once
    assert back.take() == []


async def test_device_info_lists_the_phones_and_who_is_busy(service: TaskService) -> None:
    peer = await registered(service)
    await send(service, peer, type="task", session_id="s", request="x", metadata={"device": "sim-2"})
    (info,) = await send(service, peer, type="device_info_request", target_id="box", request_id="i1")
    assert (info["type"], info["status"], info["response_id"]) == ("device_info_response", "ok", "i1")
    result = info["result"]
    assert (result["device_id"], result["platform"], result["platform_type"], result["free"]) == (
        "box", "android", "mobile", 1)
    assert [(p["serial"], p["state"], p["session_id"], p["screen_size"]) for p in result["phones"]] == [
        ("sim-1", "free", None, "1080x2400"), ("sim-2", "busy", "s", "1080x2400")]
    (one,) = await send(service, peer, type="device_info_request", target_id="sim-1")
    assert [p["serial"] for p in one["result"]["phones"]] == ["sim-1"] and one["result"]["device_id"] == "sim-1"
    (bad,) = await send(service, peer, type="device_info_request", target_id="nope", request_id="i2")
    assert (bad["type"], bad["status"], bad["response_id"]) == ("device_info_response", "error", "i2")
    assert bad["result"]["error"] == bad["error"]
    service.stop("test over")
    await service.runs.drain()


async def test_a_frame_the_reader_fails_on_is_an_error_reply(service: TaskService,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault of ours while reading a frame answers that frame; the connection is not closed."""
    import ufo_mobile.host.aip.service as module

    def broken(frame: str | bytes) -> None:
        raise TypeError("a fault of ours")

    peer = FakePeer()
    with monkeypatch.context() as patched:
        patched.setattr(module, "parse_client_message", broken)
        (error,) = await send(service, peer, type="heartbeat")
    assert (error["type"], error["status"], error["error"]) == (
        "error", "error", "internal error reading the frame: TypeError")
    (ok,) = await send(service, peer, type="heartbeat")
    assert (ok["type"], ok["status"]) == ("heartbeat", "ok")
