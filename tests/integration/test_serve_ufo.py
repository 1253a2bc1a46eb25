"""``serve`` against the behaviours UFO's own clients depend on, spoken by a real ``websockets`` client in
the message shapes UFO's code uses:

- a client that acts as UFO's device client does (it sends its request as a TASK, and starts a new task on
  every server TASK it receives, AIP's "task assignment to device") makes exactly one run per request;
- a constellation that disconnects mid-task has its tasks ended as UFO's server ends them: the run in
  flight is cancelled and recorded FAIL "cancelled: the client disconnected", the one waiting ends unrun,
  and no TASK_END waits for it.
"""

from __future__ import annotations

import asyncio
import signal
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.faults.conftest import wait_until
from tests.flows import DONE, OPEN
from tests.integration.test_serve_aip import AipClient, is_end, is_step, run_json, served, write_config

pytestmark = pytest.mark.integration


def now() -> str:
    return datetime.now(UTC).isoformat()


async def device_client(port: int, request: str) -> AipClient:
    """UFO's device client with ``--request``: register as a device, send the request, and start a task on
    each server TASK (it reads one as a task assignment); return once the request's TASK_END came and a
    heartbeat after it was answered (so anything it set off has been answered too)."""
    client = await AipClient.open(port)
    await client.send(type="register", client_id="phone-agent", client_type="device", status="ok",
                      timestamp=now(), metadata={"platform": "android", "registration_time": now()})
    assert (await client.until(lambda m: True))["status"] == "ok"

    async def start_task(text: str | None, task_name: str | None) -> None:
        await client.send(type="task", request=text, task_name=task_name or str(uuid.uuid4()), session_id=None,
                          client_id="phone-agent", client_type="device", status="continue", timestamp=now(),
                          metadata={"platform": "android"})

    await start_task(request, None)
    async with asyncio.timeout(60):
        while True:
            message = await client.until(lambda m: True)
            if message["type"] == "task":
                await start_task(message.get("user_request"), message.get("task_name"))
            if message["type"] == "task_end":
                break
    await client.send(type="heartbeat", client_id="phone-agent", request_id="after", status="ok", timestamp=now())
    await client.until(lambda m: m.get("response_id") == "after")
    await client.ws.close()
    return client


def test_ufos_device_client_makes_one_run_per_request(tmp_path: Path) -> None:
    config = write_config(tmp_path, [OPEN, DONE, DONE, DONE])
    with served(tmp_path, "--devices", "sim:1", "--config", str(config)) as (serve, port):
        client = asyncio.run(device_client(port, "Turn on Wi-Fi"))
        serve.signal(signal.SIGTERM)
        code, out, err = serve.finish()
    assert code == 128 + signal.SIGTERM and "Traceback" not in err, err
    assert [m["type"] for m in client.seen if m["type"] in ("task", "task_end")] == ["task_end"]
    (end,) = [m for m in client.seen if m["type"] == "task_end"]
    assert (end["status"], end["result"]["answer"], end["result"]["steps"]) == ("completed", "Wi-Fi is on.", 2)
    progress = [m["result"]["event"] for m in client.seen if (m["type"], m["status"]) == ("heartbeat", "continue")]
    assert progress == ["started", "step", "step"]
    assert len([p for p in (tmp_path / "logs").iterdir() if (p / "run.json").is_file()]) == 1
    assert out.count(" started on sim-1: ") == 1


async def constellation_leaves(port: int) -> AipClient:
    """Galaxy's constellation sends two tasks to the one phone (the second waits), and leaves once the first
    has made its first step (its second reply would take ten minutes)."""
    client = await AipClient.open(port)
    await client.send(type="register", client_id="galaxy", client_type="constellation", target_id="ufo_mobile",
                      status="ok", timestamp=now(), metadata={"type": "constellation_client"})
    assert (await client.until(lambda m: True))["status"] == "ok"
    for task_id in ("t1", "t2"):
        await client.send(type="task", client_type="constellation", client_id="galaxy", target_id="ufo_mobile",
                          task_name=f"galaxy/demo/{task_id}", request="Turn on Wi-Fi", session_id=f"demo@{task_id}",
                          timestamp=now(), status="continue")
    await client.find(is_step("demo@t1", 1))
    await client.ws.close()
    return client


async def come_back(port: int) -> list[dict[str, Any]]:
    """Register as ``galaxy`` again: what comes up to the answer of a heartbeat."""
    client = await AipClient.open(port, "galaxy")
    await client.send(type="heartbeat", client_id="galaxy", request_id="hb", status="ok")
    await client.until(lambda m: m.get("response_id") == "hb")
    await client.ws.close()
    return client.seen


def test_a_constellation_that_disconnects_mid_task_has_its_tasks_cancelled(tmp_path: Path) -> None:
    config = write_config(tmp_path, [OPEN, {"delay_seconds": 600, "reply": DONE}])
    with served(tmp_path, "--devices", "sim:1", "--config", str(config)) as (serve, port):
        client = asyncio.run(constellation_leaves(port))
        started = next(m for m in client.of("demo@t1") if m["result"].get("event") == "started")
        run_dir = Path(started["result"]["run_dir"])
        wait_until(lambda: run_json(run_dir).get("client_disconnected") is not None, "the run ended, recorded")
        seen = asyncio.run(come_back(port))
        serve.signal(signal.SIGTERM)
        code, out, err = serve.finish()
    assert code == 128 + signal.SIGTERM and "Traceback" not in err, err
    run = run_json(run_dir)
    assert (run["status"], run["reason"], run["interrupted"]) == ("FAIL", "cancelled: the client disconnected", True)
    assert run["client_disconnected"] == {"client_id": "galaxy", "on_disconnect": "cancelled"}
    assert [m["type"] for m in seen] == ["heartbeat", "heartbeat"]  # no TASK_END waited for its return
    assert not [m for m in client.seen if is_end("demo@t1")(m) or is_end("demo@t2")(m)]
    assert "client galaxy disconnected; cancelling its 2 task(s)" in out
    assert "task demo@t1 ended failed: cancelled: the client disconnected" in out
    assert "task demo@t2 ended failed: not run: cancelled: the client disconnected" in out
    assert len([p for p in (tmp_path / "logs").iterdir() if p.is_dir()]) == 1  # the waiting task never ran
