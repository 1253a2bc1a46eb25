"""The AIP message models: AIP's field names and values, one-line errors for every unusable frame, and
the status mapping (a FAIL is never COMPLETED)."""

from __future__ import annotations

import json
import sys

import pytest

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
from ufo_mobile.host.aip.service import task_status

# UFO³ aip/messages.py (microsoft/UFO b28183f): the fields and values a constellation reads and writes
AIP_CLIENT_FIELDS = {"type", "status", "client_type", "session_id", "task_name", "client_id", "target_id", "request",
                     "action_results", "timestamp", "request_id", "prev_response_id", "error", "metadata"}
AIP_SERVER_FIELDS = {"type", "status", "user_request", "agent_name", "process_name", "root_name", "actions",
                     "messages", "error", "session_id", "task_name", "timestamp", "response_id", "result"}
AIP_CLIENT_TYPES = {"task", "heartbeat", "command_results", "error", "register", "task_end", "device_info_request",
                    "device_info_response"}
AIP_SERVER_TYPES = {"task", "heartbeat", "task_end", "command", "error", "device_info_request", "device_info_response"}
AIP_STATUSES = {"continue", "completed", "failed", "ok", "error"}
DIGITS = sys.get_int_max_str_digits()  # the longest integer Python converts (4300 unless configured)


def test_the_models_have_aips_fields_and_values() -> None:
    assert set(ClientMessage.model_fields) == AIP_CLIENT_FIELDS
    assert set(ServerMessage.model_fields) == AIP_SERVER_FIELDS
    assert {t.value for t in ClientMessageType} == AIP_CLIENT_TYPES
    assert {t.value for t in ServerMessageType} == AIP_SERVER_TYPES
    assert {s.value for s in TaskStatus} == AIP_STATUSES


def test_a_constellations_task_parses() -> None:
    frame = json.dumps({"type": "task", "client_type": "constellation", "client_id": "galaxy@phone-host",
                        "target_id": "phone-host", "task_name": "galaxy/t/open", "request": "Open Settings",
                        "session_id": "galaxy@t1", "timestamp": "2026-01-01T00:00:00+00:00", "status": "continue",
                        "metadata": {"device": "sim-2", "options": {"limits": {"max_steps": 3}}, "trace": "x"},
                        "some_future_field": 1})
    message = parse_client_message(frame)
    assert (message.type, message.session_id, message.request) == (ClientMessageType.TASK, "galaxy@t1", "Open Settings")
    meta = task_metadata(message)
    assert (meta.device, meta.options, meta.task_yaml) == ("sim-2", {"limits": {"max_steps": 3}}, None)
    assert parse_client_message(frame.encode()).client_id == "galaxy@phone-host"  # a binary frame of UTF-8 JSON


@pytest.mark.parametrize(("frame", "error"), [
    ("not json", "not JSON: Expecting value at line 1 column 1"),
    ("[1, 2]", "not a message: a JSON list, not an object"),
    ('{"client_id": "c"}', "not a message: no 'type' (one of: task, heartbeat, "),
    ('{"type": "bogus\\nline"}', "unknown message type 'bogus\\\\nline' (one of: task, "),
    ('{"type": "task", "request": 5}', "invalid TASK: request: "),  # then pydantic's words (not asserted)
    ('{"type": "register", "client_type": "phone"}', "invalid REGISTER: client_type: "),
    ('{"type": "heartbeat", "status": "fine"}', "invalid HEARTBEAT: status: "),
    (b"\xff\xfe", "not a message: a binary frame that is not UTF-8 JSON"),
    ("[" * 100_000, "not JSON: "),
    ('{"type": "heartbeat", "n": ' + "9" * (DIGITS + 1) + "}", f"not a message: a number of more than {DIGITS} digits"),
    ('{"type": ["task"]}', "not a message: 'type' is a JSON list, not a string (one of: task, heartbeat, "),
    ('{"type": {"task": 1}}', "not a message: 'type' is a JSON object, not a string (one of: task, "),
    ('{"type": null}', "not a message: 'type' is a JSON null, not a string (one of: task, "),
    ("5", "not a message: a JSON number, not an object"),
])
def test_every_unusable_frame_is_one_line_naming_the_problem(frame: str | bytes, error: str) -> None:
    with pytest.raises(AipError) as caught:
        parse_client_message(frame)
    text = str(caught.value)
    assert text.startswith(error), text
    assert "\n" not in text and len(text) < 400
    assert text.removeprefix(error).strip() or not error.endswith(": "), text


def test_ids_are_bounded() -> None:
    with pytest.raises(AipError, match=r"^invalid REGISTER: client_id: \S") as caught:  # then pydantic's words
        parse_client_message(json.dumps({"type": "register", "client_id": "c" * 300}))
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400


def test_bad_metadata_of_ours_is_one_line() -> None:
    message = parse_client_message(json.dumps({"type": "task", "metadata": {"device": ["sim-1"]}}))
    with pytest.raises(AipError, match=r"^invalid TASK metadata: device: [^\n]+$"):  # then pydantic's words
        task_metadata(message)


def test_a_server_message_leaves_out_what_is_not_set() -> None:
    data = json.loads(ServerMessage(type=ServerMessageType.TASK_END, status=TaskStatus.FAILED, session_id="s",
                                    error="max steps", result={"status": "FAIL"}).to_json())
    assert set(data) == {"type", "status", "session_id", "error", "result", "timestamp", "response_id"}
    assert (data["type"], data["status"]) == ("task_end", "failed")


@pytest.mark.parametrize(("run_status", "aip"), [("FINISH", "completed"), ("FAIL", "failed"), ("ERROR", "failed"),
                                                 ("", "failed"), ("finish", "failed")])
def test_only_finish_is_completed(run_status: str, aip: str) -> None:
    assert task_status(run_status).value == aip
