"""The AIP (Agent Interaction Protocol) message shapes the task service speaks, as pydantic models.

Field names and enum values are AIP's (UFO³ ``aip/messages.py``), so a constellation's own
``ClientMessage``/``ServerMessage`` JSON reads and writes them unchanged: a client sends
``ClientMessage`` (REGISTER, HEARTBEAT, TASK, DEVICE_INFO_REQUEST, ...), the service answers with
``ServerMessage`` (HEARTBEAT, TASK_END, DEVICE_INFO_RESPONSE, ERROR; never a TASK, which AIP reads as a
task assignment to the device that receives it). Unknown top-level fields are ignored, as AIP's models
ignore them; a known field with a bad value is an error.

Ours, inside AIP's free-form ``metadata`` of a TASK, is ``TaskMetadata`` (the phone, an inline task
YAML, settings options); and inside a server message's ``result``, a payload whose ``event`` key says
what it is (``accepted``, ``started``, ``step``). ``parse_client_message`` turns one WebSocket frame
into a ``ClientMessage`` or an ``AipError`` whose text is one line naming the problem.
"""

from __future__ import annotations

import json
import sys
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from ufo_mobile.safe_text import printable

MAX_ID = 256  # client_id, session_id, request_id, target_id, task_name
MAX_REQUEST = 20_000  # the request text
MAX_TEXT = 2_000  # error texts
Ident = Annotated[str, StringConstraints(max_length=MAX_ID)]


class ClientMessageType(StrEnum):
    TASK = "task"
    HEARTBEAT = "heartbeat"
    COMMAND_RESULTS = "command_results"
    ERROR = "error"
    REGISTER = "register"
    TASK_END = "task_end"
    DEVICE_INFO_REQUEST = "device_info_request"
    DEVICE_INFO_RESPONSE = "device_info_response"


class ServerMessageType(StrEnum):
    TASK = "task"
    HEARTBEAT = "heartbeat"
    TASK_END = "task_end"
    COMMAND = "command"
    ERROR = "error"
    DEVICE_INFO_REQUEST = "device_info_request"
    DEVICE_INFO_RESPONSE = "device_info_response"


class TaskStatus(StrEnum):
    CONTINUE = "continue"  # a task under way (our step events' HEARTBEATs, and a TASK a client sends)
    COMPLETED = "completed"  # TASK_END of a run that ended in FINISH
    FAILED = "failed"  # TASK_END of every other end (FAIL, refused, not loadable, stopped)
    OK = "ok"
    ERROR = "error"


class ClientType(StrEnum):
    DEVICE = "device"
    CONSTELLATION = "constellation"


class AipError(ValueError):
    """A frame that is not a usable AIP message; ``str()`` is one line."""


class ClientMessage(BaseModel):
    """What a client sends (AIP's ``ClientMessage``). ``status`` is optional here (AIP clients send it;
    the service does not use it), and strings are bounded."""

    model_config = ConfigDict(extra="ignore")

    type: ClientMessageType
    status: TaskStatus | None = None
    client_type: ClientType = ClientType.DEVICE
    session_id: Ident | None = None
    task_name: Ident | None = None
    client_id: Ident | None = None
    target_id: Ident | None = None
    request: Annotated[str, StringConstraints(max_length=MAX_REQUEST)] | None = None
    action_results: list[Any] | None = None
    timestamp: Ident | None = None
    request_id: Ident | None = None
    prev_response_id: Ident | None = None
    error: Annotated[str, StringConstraints(max_length=MAX_TEXT)] | None = None
    metadata: dict[str, Any] | None = None


class TaskMetadata(BaseModel):
    """Ours, in a TASK's ``metadata``: which phone, an inline task file, and settings options.
    Other metadata keys are ignored (AIP's metadata is free-form)."""

    model_config = ConfigDict(extra="ignore")

    device: Ident | None = Field(default=None, description="the phone (its name, as DEVICE_INFO lists it)")
    task_yaml: Annotated[str, StringConstraints(max_length=200_000)] | None = Field(
        default=None, description="a task file's text (YAML), as for run")
    options: dict[str, Any] | None = Field(default=None, description="settings, laid over task_yaml")


class ServerMessage(BaseModel):
    """What the service sends (AIP's ``ServerMessage``); ``to_json`` leaves out the fields not set."""

    type: ServerMessageType
    status: TaskStatus
    user_request: str | None = None
    agent_name: str | None = None
    process_name: str | None = None
    root_name: str | None = None
    actions: list[Any] | None = None
    messages: list[str] | None = None
    error: str | None = None
    session_id: str | None = None
    task_name: str | None = None
    timestamp: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    response_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    result: Any = None

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=True)


def one_line(exc: ValidationError, what: str) -> str:
    """The first problem of a pydantic error, on one line: ``invalid TASK: metadata.device: ...``."""
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"])
    message = err["msg"].removeprefix("Value error, ")
    return printable(f"invalid {what}: {where + ': ' if where else ''}{message}", 300)


def json_kind(value: Any) -> str:
    """What a parsed JSON value is, in JSON's words (``list`` for an array, as Python says it)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {dict: "object", list: "list", str: "string", type(None): "null"}.get(type(value), type(value).__name__)


def parse_client_message(frame: str | bytes) -> ClientMessage:
    """One WebSocket frame as a ``ClientMessage``.

    Raises:
        AipError: not JSON, not an object, an unknown ``type``, or a field with a bad value.
    """
    if isinstance(frame, bytes):
        try:
            frame = frame.decode("utf-8")
        except UnicodeDecodeError:
            raise AipError("not a message: a binary frame that is not UTF-8 JSON") from None
    try:
        data = json.loads(frame)
    except json.JSONDecodeError as exc:
        raise AipError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise AipError("not JSON: nested too deeply") from None
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits())
        raise AipError(f"not a message: a number of more than {sys.get_int_max_str_digits()} digits") from None
    if not isinstance(data, dict):
        raise AipError(f"not a message: a JSON {json_kind(data)}, not an object")
    kinds = "(one of: " + ", ".join(t.value for t in ClientMessageType) + ")"
    if "type" not in data:
        raise AipError(f"not a message: no 'type' {kinds}")
    kind = data["type"]
    if not isinstance(kind, str):
        raise AipError(f"not a message: 'type' is a JSON {json_kind(kind)}, not a string {kinds}")
    if kind not in set(ClientMessageType):
        raise AipError(f"unknown message type {printable(kind, 60)!r} {kinds}")
    try:
        return ClientMessage.model_validate(data)
    except ValidationError as exc:
        raise AipError(one_line(exc, kind.upper())) from None


def task_metadata(message: ClientMessage) -> TaskMetadata:
    """The ``TaskMetadata`` of a TASK (empty when it has none).

    Raises:
        AipError: a field of ours with a bad value.
    """
    try:
        return TaskMetadata.model_validate(message.metadata or {})
    except ValidationError as exc:
        raise AipError(one_line(exc, "TASK metadata")) from None
