"""``serve`` (a subprocess) driven by a real ``websockets`` client speaking AIP: two tasks at once on two
emulated phones (``sim --port 0`` behind the private adb server) streaming their steps, one ending
COMPLETED and one FAILED; a client that disconnects mid-run with ``--keep-runs-on-disconnect`` (the run
completes, on disk, and the client gets its TASK_END when it registers again); malformed messages
answered by ERROR on a connection that stays usable; a queued and a refused task; SIGTERM ending the run
in flight; token auth (``?token=`` as UFO carries it, or a bearer header) on and off (test_serve_ufo.py: more).
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.adb_server import PrivateAdbServer
from tests.faults.conftest import HANG_GUARD, Cli, wait_until
from tests.flows import DONE, OPEN, SWITCH, WIFI

pytestmark = pytest.mark.integration

READY = re.compile(r"^serving AIP tasks on ws://(\S+):(\d+) ")
TOKEN = "tok-3f9a1c-serve-test"


def write_config(folder: Path, replies: list[Any]) -> Path:
    (folder / "script.yaml").write_text(json.dumps({"replies": replies}))
    config = folder / "base.yaml"
    config.write_text("model: {script: script.yaml}\n")
    return config


@contextmanager
def served(folder: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[tuple[Cli, int]]:
    """``serve --port 0 ARGS`` in ``folder``; yields the process and its port. A test that did not stop it
    gets it killed."""
    cli = Cli("serve", "--port", "0", "--log-dir", "logs", *args, cwd=folder, env=env)
    try:
        match = READY.match(cli.wait_line("serving AIP tasks on ws://"))
        assert match is not None
        yield cli, int(match.group(2))
    finally:
        if cli.proc.poll() is None:
            cli.signal(signal.SIGKILL)
            cli.finish()


class AipClient:
    """A websockets connection speaking AIP; every message received is kept in ``seen``."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, port: int, client_id: str | None = None, *, path: str = "/ws", **options: Any) -> AipClient:
        ws = await connect(f"ws://127.0.0.1:{port}{path}", proxy=None, open_timeout=HANG_GUARD, **options)
        client = cls(ws)
        if client_id is not None:
            await client.send(type="register", client_id=client_id, client_type="constellation", status="ok")
            reply = await client.until(lambda m: True)
            assert (reply["type"], reply["status"]) == ("heartbeat", "ok"), reply
        return client

    async def send(self, **fields: Any) -> None:
        await self.ws.send(json.dumps(fields))

    async def until(self, want: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The next message ``want`` accepts (a hang guard bounds the wait)."""
        async with asyncio.timeout(HANG_GUARD):
            while True:
                message = json.loads(await self.ws.recv())
                self.seen.append(message)
                if want(message):
                    return message

    async def find(self, want: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message ``want`` accepts, already received or still to come."""
        for message in self.seen:
            if want(message):
                return message
        return await self.until(want)

    def of(self, session_id: str) -> list[dict[str, Any]]:
        return [m for m in self.seen if m.get("session_id") == session_id]


def is_end(session_id: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m["type"] == "task_end" and m.get("session_id") == session_id


def is_event(message: dict[str, Any]) -> bool:
    """A task's progress event: a HEARTBEAT with status continue (never a TASK, AIP's task assignment)."""
    return (message["type"], message["status"]) == ("heartbeat", "continue")


def events(client: AipClient, session_id: str) -> list[str]:
    return [m["result"]["event"] for m in client.of(session_id) if is_event(m)]


def is_step(session_id: str, step: int) -> Callable[[dict[str, Any]], bool]:
    return lambda m: (is_event(m) and m.get("session_id") == session_id
                      and m["result"].get("event") == "step" and m["result"]["step"] == step)


def run_json(run_dir: str | Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((Path(run_dir) / "run.json").read_text())
    except (OSError, ValueError):
        return {}  # being written
    return data


def interval(run: dict[str, Any]) -> tuple[float, float]:
    start = datetime.fromisoformat(run["started_at"]).timestamp()
    return start, start + float(run["duration_seconds"])


@pytest.fixture
def two_phones(adb_server: PrivateAdbServer, tmp_path: Path) -> Iterator[list[str]]:
    sims: list[Cli] = []
    serials: list[str] = []
    try:
        for _ in range(2):
            sims.append(Cli("sim", "--port", "0", cwd=tmp_path))
            line = sims[-1].wait_line("simulated phone listening on 127.0.0.1:")
            serials.append(f"127.0.0.1:{int(line.split('127.0.0.1:')[1].split(';')[0])}")
        yield serials
    finally:
        for sim in sims:
            sim.signal(signal.SIGKILL)
            sim.finish()
        adb_server.run("disconnect")


def is_started(session_id: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: is_event(m) and m.get("session_id") == session_id and m["result"].get("event") == "started"


async def two_tasks_then_leave(port: int, phones: list[str], both: Path) -> AipClient:
    """Send a task that fails (a budget of one step) and one that finishes (on the second phone); once
    both have started, let their first replies go (``both``); leave once the first has ended and the
    second has made its first step (its second reply waits for a file the test makes later)."""
    client = await AipClient.open(port, "galaxy")
    await client.send(type="task", client_type="constellation", client_id="galaxy", target_id="phones-box",
                      session_id="galaxy@fails", request_id="r-fail", task_name="wifi-budget", status="continue",
                      request="Turn on Wi-Fi", metadata={"options": {"limits": {"max_steps": 1}}})
    await client.send(type="task", client_type="constellation", client_id="galaxy", target_id="phones-box",
                      session_id="galaxy@finishes", request_id="r-ok", task_name="wifi", status="continue",
                      request="Turn on Wi-Fi", metadata={"device": phones[1]})
    await client.find(is_started("galaxy@fails"))
    await client.find(is_started("galaxy@finishes"))
    both.touch()  # noqa: ASYNC240 - both runs are in flight together: their first replies may come
    await client.find(is_end("galaxy@fails"))
    await client.find(is_step("galaxy@finishes", 1))
    await client.ws.close()
    return client


async def come_back(port: int) -> dict[str, Any]:
    """Register as ``galaxy`` again: the TASK_END that ended while away comes."""
    client = await AipClient.open(port, "galaxy")
    end = await client.find(is_end("galaxy@finishes"))
    await client.ws.close()
    return end


def test_two_phones_at_once_one_completed_one_failed_and_a_client_that_goes_away(
        tmp_path: Path, adb_server: PrivateAdbServer, two_phones: list[str]) -> None:
    both, go = tmp_path / "both-started", tmp_path / "go-on"
    config = write_config(tmp_path, [{"after_file": str(both), "reply": OPEN}, {"after_file": str(go), "reply": WIFI},
                                     SWITCH, DONE])
    home = tmp_path / "home"
    home.mkdir()
    env = {"ANDROID_ADB_SERVER_PORT": str(adb_server.port), "HOME": str(home)}
    with served(tmp_path, "--devices", ",".join(two_phones), "--adb-port", str(adb_server.port),
                "--config", str(config), "--device-id", "phones-box", "--keep-runs-on-disconnect",
                env=env) as (serve, port):
        client = asyncio.run(two_tasks_then_leave(port, two_phones, both))
        # the client is gone mid-run (the second run waits for its second reply); it goes on to its end
        wait_until(lambda: any("client galaxy disconnected; its 1 task(s) go on (--keep-runs-on-disconnect)" in line
                               for line in serve.out), "the service noted the client's departure")
        go.touch()
        started = next(m for m in client.of("galaxy@finishes") if is_started("galaxy@finishes")(m))
        finished_dir = Path(started["result"]["run_dir"])
        wait_until(lambda: run_json(finished_dir).get("status") == "FINISH", "the run finished on disk")
        completed = asyncio.run(come_back(port))
        serve.signal(signal.SIGTERM)
        code, out, err = serve.finish()
    assert code == 128 + signal.SIGTERM and "Traceback" not in err, err

    acks = {m["session_id"]: m["result"] for m in client.seen if m["status"] == "ok" and "session_id" in m}
    assert {sid: (a["state"], a["phone"]) for sid, a in acks.items()} == {
        "galaxy@fails": ("running", two_phones[0]), "galaxy@finishes": ("running", two_phones[1])}
    (failed,) = [m for m in client.of("galaxy@fails") if m["type"] == "task_end"]
    assert (failed["status"], failed["response_id"], failed["task_name"]) == ("failed", "r-fail", "wifi-budget")
    assert failed["error"] == "reached the step limit (1 steps) without finishing"
    assert (failed["result"]["status"], failed["result"]["steps"], failed["result"]["cost_usd"]) == ("FAIL", 1, 0.0)
    assert events(client, "galaxy@fails") == ["started", "step"]
    assert events(client, "galaxy@finishes") == ["started", "step"]
    assert not [m for m in client.seen if m["type"] == "task"]  # no UFO component reads progress as a new task
    assert not [m for m in client.of("galaxy@finishes") if m["type"] == "task_end"]  # it left before the end

    step = next(m for m in client.of("galaxy@fails") if is_step("galaxy@fails", 1)(m))
    run_dir = Path(failed["result"]["run_dir"])
    assert (step["status"], step["agent_name"], step["response_id"]) == ("continue", "MobileAgent", "r-fail")
    shown = step["result"]
    assert (shown["step"], shown["state"], shown["status"], shown["phone"]) == (1, "CONTINUE", "FAIL", two_phones[0])
    assert shown["action"] == {"name": "open_app", "text": "open_app(text='Settings')"}
    # a budget of 1 is the final answer's: the action the model chose did not run
    assert shown["outcome"]["success"] is False and shown["reason"].startswith("reached the step limit")
    assert {"data_collection", "llm_interaction", "action_execution"} <= set(shown["timings"])
    assert shown["annotated_screenshot"] == str(run_dir / "steps" / "0001" / "annotated.jpg")
    assert shown["annotated_screenshot_url"] == Path(shown["annotated_screenshot"]).as_uri()
    assert Path(shown["annotated_screenshot"]).is_file() and Path(failed["result"]["report"]).is_file()

    run = run_json(finished_dir)
    assert (run["steps"], run["answer"], run["settings"]["device"]["serial"]) == (4, "Wi-Fi is on.", two_phones[1])
    assert run["client_disconnected"] == {"client_id": "galaxy", "on_disconnect": "kept running"}
    assert "client_disconnected" not in run_json(run_dir)  # that run ended while its client was there
    assert len((finished_dir / "steps.jsonl").read_text().splitlines()) == 4
    assert (finished_dir / "report.html").is_file()
    start_a, end_a = interval(run_json(run_dir))
    start_b, end_b = interval(run)
    assert start_a < end_b and start_b < end_a, "the two runs were in flight together"
    assert (completed["status"], completed["response_id"], completed["result"]["answer"]) == (
        "completed", "r-ok", "Wi-Fi is on.")
    assert "error" not in completed and completed["result"]["report"] == str(finished_dir / "report.html")
    assert "task galaxy@finishes ended completed: Wi-Fi is on." in out
    assert "task galaxy@fails ended failed: reached the step limit" in out


async def test_errors_leave_the_connection_usable_a_full_line_refuses_and_sigterm_ends_the_run(tmp_path: Path) -> None:
    config = write_config(tmp_path, [OPEN, {"delay_seconds": 600, "reply": DONE}])
    with served(tmp_path, "--devices", "sim:1", "--queue", "1", "--config", str(config)) as (serve, port):
        client = await AipClient.open(port)
        for frame, error in [("not json", "not JSON: Expecting value at line 1 column 1"),
                             ("[]", "not a message: a JSON list, not an object"),
                             ('{"type": "bogus"}', "unknown message type 'bogus' (one of: task, heartbeat, "),
                             ('{"type": "task", "request": "x"}', "TASK before REGISTER: register first"),
                             ('{"type": "register"}', "REGISTER needs a client_id"),
                             ('{"type": "register", "client_id": "c", "client_type": "robot"}',
                              "invalid REGISTER: client_type: ")]:  # then pydantic's words (not asserted)
            await client.ws.send(frame)
            reply = await client.until(lambda m: True)
            assert (reply["type"], reply["status"]) == ("error", "error"), reply
            assert reply["error"].startswith(error), reply["error"]
            assert reply["error"].removeprefix(error).strip() or not error.endswith(": "), reply["error"]
        await client.send(type="register", client_id="c", status="ok")
        assert (await client.until(lambda m: True))["type"] == "heartbeat"
        await client.ws.send('{"type": "task", "request": 5, "session_id": "bad"}')
        refused = (await client.until(lambda m: True))["error"]
        assert refused.startswith("invalid TASK: request: ") and "\n" not in refused, refused  # then pydantic's words
        await client.send(type="heartbeat", client_id="c", request_id="hb", status="ok")
        beat = await client.until(lambda m: True)
        assert (beat["type"], beat["status"], beat["response_id"]) == ("heartbeat", "ok", "hb")

        await client.send(type="task", session_id="t1", request="Open Settings")
        await client.send(type="task", session_id="t2", request="Open Settings")
        await client.send(type="task", session_id="t3", request="Open Settings")
        refused = await client.until(is_end("t3"))
        assert (refused["status"], refused["error"]) == (
            "failed", "refused: every phone is busy (1 running), and the waiting line is full (1 tasks, --queue)")
        queued = next(m for m in client.of("t2") if m["type"] == "heartbeat")
        assert queued["result"]["queue_position"] == 1 and queued["messages"] == [
            "queued: place 1 in line, waiting for any phone"]
        await client.find(is_step("t1", 1))
        await client.send(type="device_info_request", request_id="info")
        info = await client.until(lambda m: m["type"] == "device_info_response")
        assert info["response_id"] == "info" and info["result"]["queued_tasks"] == 1
        phones = [(p["serial"], p["state"], p["session_id"]) for p in info["result"]["phones"]]
        assert phones == [("sim-1", "busy", "t1")]

        serve.signal(signal.SIGTERM)  # the run in flight ends FAIL "terminated", the waiting task unrun
        unrun = await client.find(is_end("t2"))
        ended = await client.find(is_end("t1"))
        with pytest.raises(ConnectionClosed):
            await client.until(lambda m: True)
        code, out, err = serve.finish()
    assert code == 128 + signal.SIGTERM and "Traceback" not in err, err
    assert (unrun["status"], unrun["error"]) == ("failed", "not run: the server stopped (terminated)")
    assert (ended["status"], ended["error"], ended["result"]["signal"]) == ("failed", "terminated", "SIGTERM")
    run = run_json(ended["result"]["run_dir"])
    assert (run["status"], run["reason"], run["steps"]) == ("FAIL", "terminated", 2)
    assert "terminated: no new connections or tasks; ending 1 run(s) in flight" in out


def test_frames_that_once_closed_the_connection_are_answered_and_it_stays_open(tmp_path: Path) -> None:
    """A number longer than Python converts, and a ``type`` that is a list or an object, each get an
    ERROR; a valid message on the same connection is then answered as usual."""
    digits = sys.get_int_max_str_digits()
    frames = [('{"type": "heartbeat", "n": ' + "7" * (digits + 1) + "}",
               f"not a message: a number of more than {digits} digits"),
              ('{"type": ["heartbeat"], "client_id": "c"}', "not a message: 'type' is a JSON list, not a string"),
              ('{"type": {"heartbeat": true}}', "not a message: 'type' is a JSON object, not a string")]

    async def exchange(port: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        client = await AipClient.open(port, "c")
        answers = []
        for number, (frame, _) in enumerate(frames):
            await client.ws.send(frame)
            error = await client.until(lambda m: True)
            await client.send(type="heartbeat", request_id=f"hb{number}", status="ok")
            answers.append((error, await client.until(lambda m: True)))
        await client.ws.close()
        return answers

    config = write_config(tmp_path, [DONE])
    with served(tmp_path, "--devices", "sim:1", "--config", str(config)) as (serve, port):
        answers = asyncio.run(exchange(port))
        serve.signal(signal.SIGTERM)
        code, out, err = serve.finish()
    for number, ((_, expected), (error, beat)) in enumerate(zip(frames, answers, strict=True)):
        assert (error["type"], error["status"]) == ("error", "error"), error
        assert error["error"].startswith(expected), error["error"]
        assert (beat["type"], beat["status"], beat["response_id"]) == ("heartbeat", "ok", f"hb{number}"), beat
    assert code == 128 + signal.SIGTERM and err == "", err
    assert "internal error" not in out


async def knock(port: int) -> tuple[list[int], list[str]]:
    """Handshakes without the token, with a wrong one (in the URL, as a header), as Basic auth, and from a
    web page (refused), then one with the token in the URL (UFO's way) and one with the bearer header,
    each running a task; the refusals' HTTP statuses and the TASK_ENDs' statuses."""
    statuses = []
    for path, headers, origin in [("/ws", None, None), ("/ws?token=wrong", None, None),
                                  ("/ws", {"Authorization": "Bearer wrong"}, None),
                                  ("/ws", {"Authorization": f"Basic {TOKEN}"}, None),
                                  (f"/ws?token={TOKEN}", {"Authorization": "Bearer wrong"}, None),
                                  (f"/ws?token={TOKEN}", None, "http://evil.example")]:
        with pytest.raises(InvalidStatus) as caught:
            await AipClient.open(port, path=path, additional_headers=headers, origin=origin)
        statuses.append(caught.value.response.status_code)
    ends = []
    for number, (path, headers) in enumerate([(f"/ws?token={TOKEN}", None),
                                              ("/ws", {"Authorization": f"Bearer {TOKEN}"})]):
        client = await AipClient.open(port, f"c{number}", path=path, additional_headers=headers)
        await client.send(type="task", session_id=f"t{number}", request="Say done")
        ends.append((await client.find(is_end(f"t{number}")))["status"])
        await client.ws.close()
    return statuses, ends


def test_a_token_is_required_when_set_in_the_url_or_a_header_and_never_shown(tmp_path: Path) -> None:
    config = write_config(tmp_path, [DONE, DONE])
    with served(tmp_path, "--host", "0.0.0.0", "--devices", "sim:1", "--config", str(config),
                env={"UFO_MOBILE_SERVE_TOKEN": TOKEN}) as (serve, port):
        statuses, ends = asyncio.run(knock(port))
        serve.signal(signal.SIGINT)
        code, out, err = serve.finish()
    # refused as UFO's server refuses (HTTP 403); a web page (it sends Origin) is refused, token or not
    assert statuses == [403] * 6
    assert ends == ["completed", "completed"]
    assert code == 128 + signal.SIGINT and "Traceback" not in err, err
    assert "auth: token from UFO_MOBILE_SERVE_TOKEN" in out and out.count(": no valid token") == 5
    assert err.splitlines() == ["warning: --host 0.0.0.0 is not a loopback address: the task service is reachable "
                                "from other machines"]
    assert TOKEN not in out + err and "token=" not in out + err
    assert not any(TOKEN in p.read_text(errors="replace") for p in (tmp_path / "logs").rglob("*") if p.is_file())


def test_without_a_token_it_binds_loopback_asks_for_none_and_refuses_one(tmp_path: Path) -> None:
    """A client that sends a token to a server that has none is told so (HTTP 403 and why), not let in
    as if it were authenticated."""
    config = write_config(tmp_path, [DONE])

    async def heartbeat(port: int) -> tuple[dict[str, Any], list[tuple[int, bytes]]]:
        refused = []
        for path, headers in [(f"/ws?token={TOKEN}", None), ("/ws", {"Authorization": f"Bearer {TOKEN}"})]:
            with pytest.raises(InvalidStatus) as caught:
                await AipClient.open(port, path=path, additional_headers=headers)
            refused.append((caught.value.response.status_code, caught.value.response.body))
        client = await AipClient.open(port, "c")
        await client.send(type="heartbeat")
        reply = await client.until(lambda m: True)
        await client.ws.close()
        return reply, refused

    with served(tmp_path, "--devices", "sim:1", "--config", str(config)) as (serve, port):
        assert serve.out[0].startswith(f"serving AIP tasks on ws://127.0.0.1:{port} ")
        assert "auth: off" in serve.out[0]
        reply, refused = asyncio.run(heartbeat(port))
        assert reply["status"] == "ok"
        serve.signal(signal.SIGTERM)
        code, out, err = serve.finish()
    assert code == 128 + signal.SIGTERM and err == ""
    assert [status for status, _ in refused] == [403, 403]
    assert all(body.startswith(b"this server runs without a token; connect without one") for _, body in refused)
    assert out.count(": it carries a token, and this server runs without one") == 2 and TOKEN not in out
