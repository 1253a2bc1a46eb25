"""The AIP task service: ``python -m ufo_mobile serve``, the device side of a UFO³ Galaxy constellation.

A client (a constellation, or any ``websockets`` client) connects (with the token, when the service
has one: ``auth.py``), sends REGISTER, and then TASKs; the service runs each on one of its phones as an
ordinary run and answers in AIP's shapes:

==========================  ======================================================================
client sends                the service answers
==========================  ======================================================================
REGISTER (client_id)        HEARTBEAT status=ok (AIP's registration confirmation), then any
                            TASK_END kept for that client_id while it was away
HEARTBEAT                   HEARTBEAT status=ok
DEVICE_INFO_REQUEST         DEVICE_INFO_RESPONSE (``result``: this server and its phones), ok or error
TASK                        HEARTBEAT status=ok with ``session_id`` (AIP's acknowledgement; ``result``
                            says running or queued, and the place in line), then HEARTBEAT
                            status=continue events (``result.event``: ``started``, ``step``), then
                            TASK_END status=completed (the run ended in FINISH) or failed
anything unusable           ERROR status=error naming the problem in one line; the connection stays
==========================  ======================================================================

Step events are HEARTBEATs with status ``continue``: the one server message no UFO component acts on
beyond noting that the peer is alive. A server TASK is AIP's "task assignment to device" (UFO's device
client starts a new task on each one), a COMMAND asks the receiver to execute actions, and a HEARTBEAT
with status ``ok`` is what a constellation waiting for its registration's answer takes as that answer.

A client that goes away has its tasks cancelled, as UFO's server cancels a disconnected client's
sessions: the runs in flight end FAIL "cancelled: the client disconnected", the waiting ones unrun, and
no TASK_END is kept for them. With ``keep_runs_on_disconnect`` (``serve --keep-runs-on-disconnect``)
they go on instead, and a connection that registers the same ``client_id`` again gets the TASK_ENDs it
missed. Either way ``run.json`` and TASK_END's ``result`` say which (``client_disconnected``). A
non-TASK problem is an ERROR; a TASK that cannot run is a TASK_END failed (the client is waiting for
that session's end).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from ufo_mobile.core.session import install_stop_signals
from ufo_mobile.errors import ConfigError
from ufo_mobile.fleet.devices import Phone
from ufo_mobile.host.aip.auth import token_check
from ufo_mobile.host.aip.peers import Peer, library_logger
from ufo_mobile.host.aip.phones import PhoneInfo, pick
from ufo_mobile.host.aip.protocol import (
    AipError,
    ClientMessage,
    ClientMessageType,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    parse_client_message,
    task_metadata,
)
from ufo_mobile.host.aip.runs import Refused, Runner, Runs, ServeTask
from ufo_mobile.host.aip.session import FINISH, SessionRunner, failed_payload, note_in_record
from ufo_mobile.host.aip.tasks import settings_of_task
from ufo_mobile.safe_text import printable
from ufo_mobile.settings import Settings

KEPT_ENDS = 64  # TASK_ENDs kept for a client that is away, per client_id
KEPT_CLIENTS = 256  # client_ids with kept TASK_ENDs
FLUSH_SECONDS = 5.0  # at shutdown, how long the last messages may take to go out
CANCELLED = "cancelled: the client disconnected"
KEPT_RUNNING = "kept running"


@dataclass
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None  # None: no authentication
    device_id: str = "ufo_mobile"  # this device server's id (a constellation's target_id)
    queue_limit: int = 16  # tasks that may wait for a phone; 0: refuse instead
    log_dir: Path = Path("logs")
    driver: str | None = None  # adb or u2 for real phones
    keep_runs_on_disconnect: bool = False  # False: a client's tasks are cancelled when it goes away, as UFO's


def task_status(run_status: str) -> TaskStatus:
    """AIP's end status of a run: COMPLETED only for FINISH; FAIL (and anything else) is FAILED."""
    return TaskStatus.COMPLETED if run_status == FINISH else TaskStatus.FAILED


def error_message(text: str, *, response_id: str | None = None, session_id: str | None = None) -> ServerMessage:
    return ServerMessage(type=ServerMessageType.ERROR, status=TaskStatus.ERROR, error=printable(text, 500),
                         session_id=session_id, response_id=response_id or str(uuid.uuid4()))


class TaskService:
    """The WebSocket server, its clients and its runs. ``serve`` runs until a signal (or ``stop``)."""

    def __init__(self, base: Settings, phones: list[Phone], options: ServeOptions, *,
                 log: Callable[[str], None], runner: Runner | None = None) -> None:
        self.base = base
        self.options = options
        self.log = log
        self.runs = Runs(phones, runner or SessionRunner(options.log_dir, options.driver), self._on_event,
                         queue_limit=options.queue_limit)
        self.phones = phones
        self.info = PhoneInfo(phones, base, options.device_id)
        self.peers: dict[str, Peer] = {}  # client_id -> its live connection
        self.kept: OrderedDict[str, deque[ServerMessage]] = OrderedDict()  # TASK_ENDs of clients away
        self.signal: int | None = None
        self._stopped = asyncio.Event()

    # --- the server -------------------------------------------------------------------------

    async def serve(self, ready: Callable[[str, int], None], *, handle_signals: bool = True) -> int | None:
        """Serve until stopped; then end the runs as ``run`` ends on a signal, send their TASK_ENDs and
        close. Returns the signal that stopped it (None: ``stop`` was called).

        Raises:
            OSError: the address cannot be listened on.
        """
        def refused(where: str, why: str) -> None:
            self.log(f"refused a connection from {where}: {why}")

        auth = token_check(self.options.token, refused)
        restore = install_stop_signals(self._on_signal, lambda signum: self.runs.abandon()) if handle_signals \
            else (lambda: None)
        try:
            # origins=[None]: a handshake from a web page (it sends Origin) is refused, so no site the user
            # visits can reach a service listening on this host's loopback address
            async with serve(self._connection, self.options.host, self.options.port, process_request=auth,
                             origins=[None], logger=library_logger(self.log), server_header=None) as server:
                host, port = server.sockets[0].getsockname()[:2]
                ready(str(host), int(port))
                await self._stopped.wait()
                server.server.close()  # no new connections; the open ones hear how their runs end
                await self.runs.drain()
                for peer in list(self.peers.values()):
                    await peer.flush(FLUSH_SECONDS)
        finally:
            restore()
        return self.signal

    def stop(self, reason: str, signum: int | None = None) -> None:
        """Stop: no new tasks, the runs in flight end FAIL with ``reason``, the waiting ones unrun."""
        if not self._stopped.is_set():
            self.log(f"{reason}: no new connections or tasks; ending {len(self.runs.running)} run(s) in flight "
                     "(again to stop waiting for them)")
        self.runs.stop(reason, signum)
        self._stopped.set()

    def _on_signal(self, reason: str, signum: int) -> None:
        self.signal = signum
        self.stop(reason, signum)

    async def _connection(self, ws: ServerConnection) -> None:
        peer = Peer(ws)
        peer.start()
        try:
            async for frame in ws:
                await self._on_frame(peer, frame)
        except ConnectionClosed:
            pass
        finally:
            peer.close()
            self._gone(peer)

    def _gone(self, peer: Peer) -> None:
        if peer.client_id is None or self.peers.get(peer.client_id) is not peer:
            return
        del self.peers[peer.client_id]
        mine = [t for t in [*self.runs.running.values(), *self.runs.waiting] if t.client_id == peer.client_id]
        keep = self.options.keep_runs_on_disconnect
        for task in mine:
            task.client_left = task.client_left or (KEPT_RUNNING if keep else "cancelled")
        if not mine:
            self.log(f"client {printable(peer.client_id, 80)} disconnected")
        elif keep:
            self.log(f"client {printable(peer.client_id, 80)} disconnected; its {len(mine)} task(s) go on "
                     "(--keep-runs-on-disconnect)")
        else:
            self.log(f"client {printable(peer.client_id, 80)} disconnected; cancelling its {len(mine)} task(s)")
            self.runs.cancel({t.session_id for t in mine}, CANCELLED)

    # --- messages from a client ---------------------------------------------------------------

    async def _on_frame(self, peer: Peer, frame: str | bytes) -> None:
        try:
            message = parse_client_message(frame)
        except AipError as exc:
            peer.post(error_message(str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - a frame we failed to read answers an ERROR; the connection stays
            self.log(f"internal error reading a frame: {printable(repr(exc), 300)}")
            peer.post(error_message(f"internal error reading the frame: {type(exc).__name__}"))
            return
        if peer.client_id is not None and message.client_id and message.client_id != peer.client_id:
            peer.post(error_message(f"client_id {message.client_id!r} does not match this connection's "
                                    f"registration ({peer.client_id!r})", response_id=message.request_id))
            return
        try:
            await self._dispatch(peer, message)
        except Exception as exc:  # noqa: BLE001 - a fault of ours answers this message; the connection stays
            self.log(f"internal error on a {message.type.value} message: {printable(repr(exc), 300)}")
            peer.post(error_message(f"internal error: {exc!r}", response_id=message.request_id))

    async def _dispatch(self, peer: Peer, message: ClientMessage) -> None:
        kind = message.type
        if kind == ClientMessageType.HEARTBEAT:
            peer.post(ServerMessage(type=ServerMessageType.HEARTBEAT, status=TaskStatus.OK,
                                    response_id=message.request_id or str(uuid.uuid4())))
        elif kind == ClientMessageType.REGISTER:
            self._register(peer, message)
        elif kind in (ClientMessageType.ERROR, ClientMessageType.TASK_END):
            if kind == ClientMessageType.ERROR:  # noted, never answered (two peers must not echo errors)
                self.log(f"client {printable(peer.client_id or '?', 80)} reported an error: "
                         f"{printable(message.error or '', 300)}")
        elif peer.client_id is None:
            peer.post(error_message(f"{kind.value.upper()} before REGISTER: register first (type 'register' "
                                    "with a client_id)", response_id=message.request_id))
        elif kind == ClientMessageType.TASK:
            self._task(peer, message)
        elif kind == ClientMessageType.DEVICE_INFO_REQUEST:
            await self._device_info(peer, message)
        else:  # COMMAND_RESULTS, DEVICE_INFO_RESPONSE: answers to questions this server never asks
            peer.post(error_message(f"{kind.value.upper()} is not expected: this device server runs its tasks "
                                    "itself and sends no COMMAND or DEVICE_INFO_REQUEST",
                                    response_id=message.request_id))

    def _register(self, peer: Peer, message: ClientMessage) -> None:
        client_id = message.client_id
        if not client_id:
            peer.post(error_message("REGISTER needs a client_id", response_id=message.request_id))
            return
        if not self._names_us(message.target_id):
            peer.post(error_message(self._not_us(message.target_id), response_id=message.request_id))
            return
        holder = self.peers.get(client_id)
        if holder is not None and holder is not peer and not holder.closed:
            peer.post(error_message(f"client_id {client_id!r} is already connected", response_id=message.request_id))
            return
        peer.client_id, peer.client_type = client_id, message.client_type
        self.peers[client_id] = peer
        mine = [t.session_id for t in [*self.runs.running.values(), *self.runs.waiting] if t.client_id == client_id]
        peer.post(ServerMessage(type=ServerMessageType.HEARTBEAT, status=TaskStatus.OK,
                                response_id=message.request_id or str(uuid.uuid4()),
                                messages=[f"registered as {client_id}"],
                                result={"event": "registered", "device_id": self.options.device_id,
                                        "phones": self.info.names, "tasks": mine}))
        for end in self.kept.pop(client_id, deque()):
            peer.post(end)
        self.log(f"client {printable(client_id, 80)} registered ({message.client_type.value}) from {peer.address}")

    async def _device_info(self, peer: Peer, message: ClientMessage) -> None:
        target = message.target_id
        if not self._names_us(target):
            why = self._not_us(target)  # AIP's failed DEVICE_INFO_RESPONSE: status error, result {"error": ...}
            peer.post(ServerMessage(type=ServerMessageType.DEVICE_INFO_RESPONSE, status=TaskStatus.ERROR,
                                    response_id=message.request_id or str(uuid.uuid4()), result={"error": why},
                                    error=why))
            return
        only = target if target != self.options.device_id else None
        result = await self.info.result(self.runs.busy(), len(self.runs.waiting), only)
        peer.post(ServerMessage(type=ServerMessageType.DEVICE_INFO_RESPONSE, status=TaskStatus.OK,
                                response_id=message.request_id or str(uuid.uuid4()), result=result))

    def _task(self, peer: Peer, message: ClientMessage) -> None:
        assert peer.client_id is not None
        session_id = message.session_id or str(uuid.uuid4())
        if self.runs.known(session_id):
            peer.post(error_message(f"session_id {session_id!r} is already running or waiting here; give each TASK "
                                    "its own", response_id=message.request_id, session_id=session_id))
            return
        try:
            meta = task_metadata(message)
            phone = pick(self.phones, self.options.device_id, meta.device, message.target_id)
            settings = settings_of_task(self.base, message, meta)
            task = ServeTask(session_id, peer.client_id, settings, phone, message.request_id, message.task_name)
            place = self.runs.submit(task)
        except (AipError, ValueError, ConfigError, Refused) as exc:
            why = "refused" if isinstance(exc, Refused) else "the task does not load"
            end = failed_payload(None, f"{why}: {exc}")
            self._deliver(peer.client_id, self._end_message(session_id, message.request_id, message.task_name, end))
            self.log(f"task {printable(session_id, 80)} from {printable(peer.client_id, 80)}: "
                     f"{printable(end['reason'], 300)}")
            return
        state = "running" if place == 0 else "queued"
        note = f"running on {task.ran_on}" if place == 0 else f"queued: place {place} in line, waiting for {task.wants}"
        peer.post(ServerMessage(type=ServerMessageType.HEARTBEAT, status=TaskStatus.OK, session_id=session_id,
                                task_name=message.task_name, response_id=message.request_id or str(uuid.uuid4()),
                                messages=[note],
                                result={"event": "accepted", "state": state, "phone": task.ran_on,
                                        "queue_position": place, "waiting_for": task.wants if place else None}))
        self.log(f"task {printable(session_id, 80)} from {printable(peer.client_id, 80)}: {note}")

    def _names_us(self, target_id: str | None) -> bool:
        """Whether ``target_id`` is absent, this device server or one of its phones."""
        return target_id is None or target_id == self.options.device_id or target_id in self.info.names

    def _not_us(self, target_id: str | None) -> str:
        return printable(f"target_id {target_id!r} is neither this device server ({self.options.device_id!r}, "
                         f"--device-id) nor one of its phones ({', '.join(self.info.names)})", 300)

    # --- events of the runs -------------------------------------------------------------------

    def _on_event(self, task: ServeTask, kind: str, payload: dict[str, Any]) -> None:
        """A run's event, to its client; called from inside the run, so it never raises."""
        try:
            self._tell(task, kind, payload)
        except Exception as exc:  # noqa: BLE001 - an event that cannot be sent must not end the run
            self.log(f"task {printable(task.session_id, 80)}: a {kind} event was not sent: {printable(repr(exc), 300)}")

    def _tell(self, task: ServeTask, kind: str, payload: dict[str, Any]) -> None:
        if kind == "ended":
            if task.client_left is not None:
                payload = self._note_departure(task, payload)
            end = self._end_message(task.session_id, task.request_id, task.task_name, payload)
            if task.client_left != "cancelled" or task.client_id in self.peers:
                self._deliver(task.client_id, end)
            where = f" (run directory: {printable(str(payload['run_dir']), 200)})" if payload.get("run_dir") else ""
            self.log(f"task {printable(task.session_id, 80)} ended {end.status.value}: "
                     f"{printable(str(payload.get('answer') or payload.get('reason') or ''), 200)}{where}")
            return
        peer = self.peers.get(task.client_id)
        if kind == "started":
            self.log(f"task {printable(task.session_id, 80)} started on {task.ran_on}: "
                     f"{printable(str(payload.get('run_dir')), 200)}")
        if peer is None:
            return  # the client is away: its run goes on, its events are not kept
        # a HEARTBEAT, never a TASK: a server TASK is a task assignment to the device that receives it
        peer.post(ServerMessage(type=ServerMessageType.HEARTBEAT, status=TaskStatus.CONTINUE,
                                session_id=task.session_id, task_name=task.task_name,
                                response_id=task.request_id or str(uuid.uuid4()),
                                agent_name=payload.get("agent"), result=payload,
                                user_request=task.settings.task.text if kind == "started" else None),
                  droppable=kind == "step")

    @staticmethod
    def _note_departure(task: ServeTask, payload: dict[str, Any]) -> dict[str, Any]:
        """The end payload of a task whose client went away, and its ``run.json``, saying so."""
        note = {"client_id": task.client_id, "on_disconnect": task.client_left}
        note_in_record(payload.get("run_dir"), "client_disconnected", note)
        return {**payload, "client_disconnected": note}

    @staticmethod
    def _end_message(session_id: str, request_id: str | None, task_name: str | None,
                     payload: dict[str, Any]) -> ServerMessage:
        status = task_status(str(payload.get("status")))
        return ServerMessage(type=ServerMessageType.TASK_END, status=status, session_id=session_id,
                             task_name=task_name, response_id=request_id or str(uuid.uuid4()), result=payload,
                             error=None if status == TaskStatus.COMPLETED else str(payload.get("reason") or "failed"))

    def _deliver(self, client_id: str, message: ServerMessage) -> None:
        """Send ``message`` to ``client_id``'s connection; keep it for the client's return when it is away."""
        peer = self.peers.get(client_id)
        if peer is not None and peer.post(message):
            return
        kept = self.kept.setdefault(client_id, deque(maxlen=KEPT_ENDS))
        kept.append(message)
        self.kept.move_to_end(client_id)
        while len(self.kept) > KEPT_CLIENTS:
            self.kept.popitem(last=False)
