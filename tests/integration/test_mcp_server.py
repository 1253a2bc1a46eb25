"""The MCP device server driven by the ``mcp`` SDK's own clients: over stdio (the command line as a
subprocess, on the built-in simulated phone and on an emulated phone behind the real adb server) and
over streamable HTTP (both servers in one event loop sharing one state, and the command line)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.adb_server import PrivateAdbServer
from tests.faults.conftest import HANG_GUARD, ROOT, Cli, cli, one_line_error
from tests.mcp_calls import call
from ufo_mobile.cli.mcp_cmd import TOKEN_ENV
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.errors import DeviceDisconnectedError
from ufo_mobile.host.mcp.limits import SessionLimits
from ufo_mobile.host.mcp.server import Listening, bind, serve
from ufo_mobile.host.mcp.state import MobileServerState
from ufo_mobile.sim.phone.simphone import SimPhone

pytestmark = pytest.mark.integration

DATA_TOOLS = ["capture_screenshot", "get_ui_tree", "get_device_info", "get_mobile_app_target_info",
              "get_app_window_controls_target_info"]
ACTION_TOOLS = ["tap", "swipe", "type_text", "launch_app", "press_key", "click_control", "wait", "invalidate_cache"]
TOKEN = "tok-81c2e7-mcp-test"
HOSTILE = "Milk & eggs; $(reboot) 'q' \"dq\" `id` | x"  # nothing here may reach a shell as syntax


async def click(client: Client, name: str, *, actions: Client | None = None) -> None:
    """Observe (through ``client``), then click the control called ``name`` (through ``actions``)."""
    controls = await call(client, "get_app_window_controls_target_info")
    found = [c for c in controls if c["name"] == name]
    assert found, (name, [c["name"] for c in controls])
    clicked = await call(actions or client, "click_control", control_id=found[0]["id"], control_name=name)
    assert clicked["success"] is True, clicked


async def ui_texts(client: Client) -> list[str]:
    tree = await call(client, "get_ui_tree", )
    assert tree["success"] is True, tree
    return [node.get("text", "") for node in ET.fromstring(tree["ui_tree"]).iter("node")]


async def checked(client: Client, text: str) -> bool:
    tree = await call(client, "get_ui_tree")
    return any(n.get("checked") == "true" for n in ET.fromstring(tree["ui_tree"]).iter("node") if n.get("text") == text)


async def wifi_and_a_note(client: Client, note: str) -> None:
    """Turn Wi-Fi on in Settings and type ``note`` as a new note's title, through the tools only."""
    assert (await call(client, "launch_app", package_name="com.android.settings"))["success"] is True
    await click(client, "Wi-Fi")
    await click(client, "Use Wi-Fi")
    assert await checked(client, "Use Wi-Fi")
    launched = await call(client, "launch_app", package_name="Notes")  # by name: resolved to the package
    assert launched["success"] is True and launched["package_name"] == "com.example.notes", launched
    await click(client, "New note")
    controls = await call(client, "get_app_window_controls_target_info")
    field = next(c for c in controls if c["type"] == "EditText")
    typed = await call(client, "type_text", text=note, control_id=field["id"], control_name=field["name"])
    assert typed["success"] is True, typed
    assert note in await ui_texts(client)


@asynccontextmanager
async def stdio_session(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    """``python -m ufo_mobile mcp --transport stdio ARGS`` under the SDK's stdio client (legacy
    initialize handshake, as UFO's client does); its stderr goes to ``tmp_path/mcp.err``."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "ufo_mobile", "mcp", "--transport", "stdio", *args],
                                   env={"PYTHONPATH": str(ROOT), "HOME": str(home), **(env or {})}, cwd=str(tmp_path))
    with (tmp_path / "mcp.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            yield client


async def test_stdio_serves_both_groups_on_the_simulated_phone(tmp_path: Path) -> None:
    async with stdio_session(tmp_path, "--device", "sim") as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        assert tools == DATA_TOOLS + ACTION_TOOLS
        await wifi_and_a_note(client, HOSTILE + " ünï")
        shot = await call(client, "capture_screenshot")
        assert shot.startswith("data:image/png;base64,")
    err = (tmp_path / "mcp.err").read_text()
    assert "mcp: serving the data and action tools of the simulated phone on stdio" in err
    assert "mcp: stopped; the simulated phone closed" in err  # the client closed stdin: a clean exit


def test_stdio_writes_nothing_but_protocol_to_stdout(tmp_path: Path) -> None:
    """A raw client: one JSON-RPC line out, one line back, and nothing else ever on stdout."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "get_app_window_controls_target_info", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "tap", "arguments": {"x": 1, "y": 1}}},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "mcp", "--transport", "stdio", "--device", "sim"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    guard = threading.Timer(HANG_GUARD, proc.kill)  # only ever fires when the server hangs
    guard.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        replies = []
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if "id" in request:
                replies.append(json.loads(proc.stdout.readline()))  # the next line is its answer
        rest, err = proc.communicate()  # closes stdin: the server's cue to stop
    finally:
        guard.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert rest == ""
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert replies[1]["result"]["structuredContent"]["result"][0]["kind"] == "control"
    assert replies[2]["result"]["structuredContent"]["success"] is True


def test_stdio_stops_on_sigterm_while_the_client_is_silent(tmp_path: Path) -> None:
    """No read of the silent client's stdin may outlive the server (a thread blocked in it once
    crashed the interpreter's exit)."""
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "mcp", "--transport", "stdio", "--device", "sim"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
                            start_new_session=True)
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline().startswith("mcp: serving the data and action tools")  # ready: now signal
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=HANG_GUARD)  # stdin stays open: the signal alone stops it
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out == "" and err.strip() == "mcp: stopped; the simulated phone closed"


@pytest.fixture
def emulated_phone(adb_server: PrivateAdbServer, tmp_path: Path) -> Iterator[tuple[Cli, str]]:
    """The simulated phone served over ADB by a ``sim --port 0`` process (so it can be frozen)."""
    sim = Cli("sim", "--port", "0", cwd=tmp_path)
    try:
        line = sim.wait_line("simulated phone listening on 127.0.0.1:")
        yield sim, f"127.0.0.1:{int(line.split('127.0.0.1:')[1].split(';')[0])}"
    finally:
        sim.signal(signal.SIGKILL)
        sim.finish()
        adb_server.run("disconnect")


async def test_stdio_drives_a_phone_behind_the_adb_server(tmp_path: Path, adb_server: PrivateAdbServer,
                                                          emulated_phone: tuple[Cli, str]) -> None:
    sim, serial = emulated_phone
    async with stdio_session(tmp_path, "--device", serial, "--adb-port", str(adb_server.port), "--timeout", "3",
                             env={"ANDROID_ADB_SERVER_PORT": str(adb_server.port)}) as client:
        await wifi_and_a_note(client, HOSTILE)
        info = await call(client, "get_device_info")
        assert info["device_info"]["model"] == "UFO Sim Phone"
        assert info["device_info"]["screen_size"].startswith("Physical size: 1080x2400")
        sim.signal(signal.SIGSTOP)  # the phone freezes: a call fails after the timeout instead of hanging
        try:
            frozen = await call(client, "tap", x=5, y=5)
        finally:
            sim.signal(signal.SIGCONT)
        assert frozen["success"] is False and "timed out after 3 s" in frozen["error"], frozen
    assert f"mcp: stopped; {serial} closed" in (tmp_path / "mcp.err").read_text()


async def test_http_servers_share_one_state_in_one_process() -> None:
    phone = SimPhone()
    driver = SimDriver(phone)
    state = MobileServerState(driver, timeout=10.0, clock=lambda: 0.0)  # a cached screen only ages by an action
    sockets = {"data": bind("127.0.0.1", 0), "action": bind("127.0.0.1", 0)}
    stop, listening = asyncio.Event(), asyncio.Future[Listening]()
    server = asyncio.create_task(serve(state, ["data", "action"], "http", sockets=sockets, stop=stop,
                                       ready=listening.set_result))
    try:
        urls = (await asyncio.wait_for(listening, 60)).urls
        assert urls["data"].endswith("/mcp") and urls["data"] != urls["action"]
        async with Client(urls["data"]) as data, Client(urls["action"]) as action:
            assert [t.name for t in (await data.list_tools()).tools] == DATA_TOOLS
            assert [t.name for t in (await action.list_tools()).tools] == ACTION_TOOLS

            launched = await call(action, "launch_app", package_name="com.android.settings")
            assert launched["success"] is True and phone.current_app().package == "com.android.settings"
            await click(data, "Wi-Fi", actions=action)  # an id observed on one server, clicked on the other
            await click(data, "Use Wi-Fi", actions=action)
            assert phone.state("com.android.settings")["wifi"] is True

            await call(action, "launch_app", package_name="com.example.notes")
            await click(data, "New note", actions=action)
            controls = await call(data, "get_app_window_controls_target_info")
            field = next(c for c in controls if c["type"] == "EditText")
            typed = await call(action, "type_text", text=HOSTILE, control_id=field["id"], control_name=field["name"])
            assert typed["success"] is True, typed
            assert phone.state("com.example.notes")["title"] == HOSTILE

            # the cached screen is served until the action server is told to forget it
            before = await call(data, "get_app_window_controls_target_info")
            phone.start_app("com.android.settings")  # behind the server's back
            assert await call(data, "get_app_window_controls_target_info") == before
            assert (await call(action, "invalidate_cache", cache_type="controls"))["success"] is True
            after = await call(data, "get_app_window_controls_target_info")
            assert after != before and "Wi-Fi" in [c["name"] for c in after]
    finally:
        stop.set()
        await asyncio.wait_for(server, 60)
    with pytest.raises(DeviceDisconnectedError):  # the phone was closed on the way out
        await driver.tap(1, 1)


async def test_http_command_line_serves_until_sigterm(tmp_path: Path) -> None:
    server = Cli("mcp", "--device", "sim", "--data-port", "0", "--action-port", "0", cwd=tmp_path,
                 env={"HOME": str(tmp_path)})
    try:
        data_url = server.wait_line("mcp data server (MobileDataCollector) listening on ").split()[-1]
        action_url = server.wait_line("mcp action server (MobileActionExecutor) listening on ").split()[-1]
        async with Client(data_url.replace("127.0.0.1", "localhost"), mode="legacy") as data, \
                Client(action_url, mode="legacy") as action:
            assert [t.name for t in (await data.list_tools()).tools] == DATA_TOOLS
            apps = await call(data, "get_mobile_app_target_info", filter="notes")
            assert (await call(action, "launch_app", package_name=apps[0]["type"], id=apps[0]["id"]))["success"]
            assert "Notes" in await ui_texts(data)
    finally:
        server.signal(signal.SIGTERM)
        code, _, err = server.finish()
    assert code == 0, err
    assert err.strip().splitlines()[-1] == "mcp: stopped; the simulated phone closed"


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}}}
POST_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@asynccontextmanager
async def served_http(limits: SessionLimits, groups: tuple[str, ...] = ("data",),
                      token: str | None = None) -> AsyncIterator[Listening]:
    """``serve`` over HTTP on the simulated phone (free ports), until the block ends."""
    state = MobileServerState(SimDriver(SimPhone()), timeout=10.0)
    sockets = {group: bind("127.0.0.1", 0) for group in groups}
    stop, listening = asyncio.Event(), asyncio.Future[Listening]()
    server = asyncio.create_task(serve(state, list(groups), "http", sockets=sockets, stop=stop,
                                       ready=listening.set_result, limits=limits, token=token))
    try:
        yield await asyncio.wait_for(listening, HANG_GUARD)
    finally:
        stop.set()
        await asyncio.wait_for(server, HANG_GUARD)


async def flood(listening: Listening, address: str, count: int, at_once: int,
                headers: dict[str, str] | None = None) -> Counter[int]:
    """``count`` initialize requests without a DELETE, ``at_once`` at a time, from ``address``, sent
    to the data server's app in this process (a real HTTP client would take minutes); their statuses."""
    transport = httpx2.ASGITransport(app=listening.apps["data"], client=(address, 40000))
    statuses: Counter[int] = Counter()
    gate = asyncio.Semaphore(at_once)
    async with httpx2.AsyncClient(transport=transport, base_url=listening.urls["data"].removesuffix("/mcp")) as http:
        async def one() -> None:
            async with gate:
                statuses[(await http.post("/mcp", json=INITIALIZE, headers={**POST_HEADERS, **(headers or {})})
                          ).status_code] += 1
        await asyncio.gather(*(one() for _ in range(count)))
    return statuses


def sdk_sessions(listening: Listening) -> int:
    """The sessions the SDK's own session manager holds (its private table: nothing public counts them)."""
    return len(listening.servers["data"].session_manager._server_instances)


async def test_ten_thousand_sessions_left_open_lock_nobody_out() -> None:
    limits = SessionLimits(per_client=16, total=64)
    async with served_http(limits) as listening:
        url, book = listening.urls["data"], listening.sessions["data"]
        async with Client(url, mode="legacy") as before:  # a session from 127.0.0.1, open through the flood
            assert book.held("127.0.0.1") == 1
            # more at once than it may hold: sessions (its idle ones making room) or 503 while all are opening
            statuses = await flood(listening, "192.0.2.7", 10_000, at_once=2 * limits.per_client)
            assert set(statuses) <= {200, 503} and sum(statuses.values()) == 10_000, statuses
            assert statuses[200] >= limits.per_client
            assert (book.held("192.0.2.7"), book.held("127.0.0.1"), book.live) == (limits.per_client, 1,
                                                                                  limits.per_client + 1)
            assert sdk_sessions(listening) == limits.per_client + 1
            assert [t.name for t in (await before.list_tools()).tools] == DATA_TOOLS
            assert (await call(before, "get_device_info"))["success"] is True
            async with Client(url, mode="legacy") as after:  # a new session-based client
                assert [t.name for t in (await after.list_tools()).tools] == DATA_TOOLS
                assert (await call(after, "get_device_info"))["device_info"]["model"] == "UFO Sim Phone"
                assert book.held("127.0.0.1") == 2

            # from the SDK client's own address, fewer at once than it may hold: every one gets a session,
            # each closing the least recently used idle one; ``before`` is busy (its GET stream) and stays
            statuses = await flood(listening, "127.0.0.1", 500, at_once=4)
            assert statuses == Counter({200: 500}), statuses
            assert book.held("127.0.0.1") == limits.per_client and sdk_sessions(listening) == 2 * limits.per_client
            assert (await call(before, "get_device_info"))["success"] is True
            async with Client(url, mode="legacy") as fresh:
                assert (await call(fresh, "get_device_info"))["success"] is True
        assert book.held("127.0.0.1") == limits.per_client - 2  # both clients' DELETEs were heard
        assert book.live == sdk_sessions(listening) == 2 * limits.per_client - 2


async def test_an_idle_session_expires_and_its_id_is_then_unknown() -> None:
    async with served_http(SessionLimits(per_client=4, total=8, idle_seconds=0.2)) as listening:
        transport = httpx2.ASGITransport(app=listening.apps["data"], client=("127.0.0.1", 40000))
        base = listening.urls["data"].removesuffix("/mcp")
        async with httpx2.AsyncClient(transport=transport, base_url=base) as http:
            opened = await http.post("/mcp", json=INITIALIZE, headers=POST_HEADERS)
            session_id = opened.headers["mcp-session-id"]
            assert sdk_sessions(listening) == 1 and listening.sessions["data"].live == 1
            async with asyncio.timeout(HANG_GUARD):
                while sdk_sessions(listening):  # noqa: ASYNC110 - the SDK closes it once idle for 0.2 s
                    await asyncio.sleep(0.02)
            again = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                                    headers={**POST_HEADERS, "mcp-session-id": session_id})
            assert again.status_code == 404
            assert listening.sessions["data"].live == 0


async def test_with_a_token_requests_without_it_open_nothing() -> None:
    async with served_http(SessionLimits(), token=TOKEN) as listening:
        statuses = await flood(listening, "127.0.0.1", 300, at_once=8)
        wrong = await flood(listening, "127.0.0.1", 10, at_once=2, headers={"Authorization": "Bearer nope"})
        assert statuses == Counter({401: 300}) and wrong == Counter({401: 10})
        assert sdk_sessions(listening) == 0 and listening.sessions["data"].live == 0
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http, \
                Client(streamable_http_client(listening.urls["data"], http_client=http), mode="legacy") as client:
            assert (await call(client, "get_device_info"))["success"] is True
            assert sdk_sessions(listening) == 1


async def test_http_command_line_asks_for_the_token_and_says_so(tmp_path: Path) -> None:
    server = Cli("mcp", "--device", "sim", "--server", "data", "--data-port", "0", "--session-idle", "60",
                 "--max-sessions-per-client", "4", cwd=tmp_path, env={"HOME": str(tmp_path), TOKEN_ENV: TOKEN})
    try:
        url = server.wait_line("mcp data server (MobileDataCollector) listening on ").split()[-1]
        said = server.wait_line("mcp: auth: ")
        async with httpx2.AsyncClient() as raw:
            for _ in range(3):
                refused = await raw.post(url, json=INITIALIZE, headers=POST_HEADERS)
                assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http, \
                Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            assert (await call(client, "get_device_info"))["success"] is True
    finally:
        server.signal(signal.SIGTERM)
        code, out, err = server.finish()
    assert code == 0, err
    assert said.strip() == (f"mcp: auth: bearer token from {TOKEN_ENV}; sessions: 4 per client address, 128 in all, "
                            "closed after 60 s idle")
    assert err.count("mcp: refused a request from 127.0.0.1: no valid bearer token") == 1  # once a minute at most
    assert TOKEN not in out + err


def test_an_empty_token_is_an_error(tmp_path: Path) -> None:
    code, out, err = cli("mcp", "--device", "sim", "--data-port", "0", "--action-port", "0", cwd=tmp_path,
                         env={"HOME": str(tmp_path), TOKEN_ENV: "  "})
    one_line_error(code, err, TOKEN_ENV, "is set but empty")
    assert out == ""


@pytest.mark.parametrize("args, flag", [
    (["--data-port", "70000"], "--data-port"),
    (["--timeout", "0"], "--timeout"),
    (["--device", "sim:2"], "--device"),
    (["--device", "sim", "--driver", "u2"], "--driver"),
    (["--server", "both", "--data-port", "9999", "--action-port", "9999"], "--action-port"),
    (["--session-idle", "0"], "--session-idle"),
    (["--max-sessions", "0"], "--max-sessions"),
    (["--max-sessions", "4", "--max-sessions-per-client", "5"], "--max-sessions-per-client"),
])
def test_bad_flags_are_one_line_naming_the_flag(tmp_path: Path, args: list[str], flag: str) -> None:
    code, out, err = cli("mcp", *args, cwd=tmp_path)
    one_line_error(code, err, flag)
    assert out == ""


def test_a_port_in_use_and_a_phone_that_is_not_there(tmp_path: Path, adb_server: PrivateAdbServer) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code, _, err = cli("mcp", "--device", "sim", "--data-port", port, "--action-port", "0", cwd=tmp_path)
        assert "Address already in use" in one_line_error(code, err, "--data-port", port)
    for transport in ("http", "stdio"):
        code, out, err = cli("mcp", "--transport", transport, "--device", "127.0.0.1:9", "--adb-port",
                             str(adb_server.port), "--timeout", "5", "--data-port", "0", "--action-port", "0",
                             cwd=tmp_path, env={"HOME": str(tmp_path)})
        one_line_error(code, err, "--device", "cannot open 127.0.0.1:9")
        assert out == ""
