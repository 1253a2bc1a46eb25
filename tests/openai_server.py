"""A local OpenAI-compatible HTTP server for tests: scripted answers, recorded requests.

``OpenAIServer`` serves ``POST /v1/chat/completions`` and Azure's
``POST /openai/deployments/{deployment}/chat/completions?api-version=...`` on 127.0.0.1 (port 0)
from a thread (stdlib ``ThreadingHTTPServer``). Each request takes the next scripted answer:

* ``Reply(status, body, headers)``: ``chat(text, ...)`` builds a completion with usage,
  ``error(status, message, ...)`` an OpenAI-shaped error;
* ``Hold(then)``: the request waits until ``release()`` (or ``stop()``), then gets ``then`` or, with
  none, a closed connection. Use it for timeouts: never a fixed sleep;
* ``Drop()``: the connection is closed without an answer.

With ``key`` set, a request without ``Authorization: Bearer <key>`` (``api-key: <key>`` on the Azure
path) gets 401 and takes no scripted answer; with ``require_image`` set, so does a request with no
``image_url`` part (400, "no image part"). When the script is used up the answer is 400 ("no
scripted answer left"), which the client does not retry. Every request is recorded
(``requests``: path, query, headers, JSON body) before it is answered.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

_AZURE_PATH = re.compile(r"/openai/deployments/(?P<deployment>[^/]+)/chat/completions")
HANG_GUARD = 60.0  # seconds; only reached when something hangs


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # a dict or list is sent as JSON; a str as it is
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hold:
    then: Reply | None = None  # None: close the connection once released


@dataclass
class Drop:
    pass


Scripted = Reply | Hold | Drop


def chat(text: str, *, prompt_tokens: int = 100, completion_tokens: int = 20, cached_tokens: int | None = 0,
         model: str = "gpt-4o-2024-08-06", finish_reason: str = "stop", usage: bool = True) -> Reply:
    """A chat completion answering ``text`` (a dict is sent as its JSON), with the given usage."""
    content = text if isinstance(text, str) else json.dumps(text)
    body: dict[str, Any] = {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                         "total_tokens": prompt_tokens + completion_tokens}
        if cached_tokens is not None:
            body["usage"]["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return Reply(200, body)


def error(status: int, message: str, *, code: str | None = None, type_: str = "invalid_request_error",
          param: str | None = None, headers: dict[str, str] | None = None) -> Reply:
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return Reply(status, body, dict(headers or {}))


@dataclass
class Request:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names in lower case
    body: Any

    @property
    def deployment(self) -> str | None:
        match = _AZURE_PATH.fullmatch(self.path)
        return match.group("deployment") if match else None

    def image_parts(self) -> list[dict[str, Any]]:
        """The ``image_url`` parts of every message."""
        found: list[dict[str, Any]] = []
        for message in (self.body or {}).get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                found.extend(p for p in content if isinstance(p, dict) and p.get("type") == "image_url")
        return found

    def has_image(self) -> bool:
        return bool(self.image_parts())

    def text(self) -> str:
        """Every text of every message, joined (to look for what the model was told)."""
        out = []
        for message in (self.body or {}).get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out.extend(p.get("text", "") for p in content if isinstance(p, dict))
        return "\n".join(out)


class OpenAIServer:
    def __init__(self, *, key: str | None = None, require_image: bool = False) -> None:
        self.key = key
        self.require_image = require_image
        self.requests: list[Request] = []
        self._script: deque[Scripted] = deque()
        self._lock = threading.Condition()
        self._released = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---

    def start(self) -> OpenAIServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="openai-test-server",
                                        daemon=True)  # a short poll: stop() returns at once
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(HANG_GUARD)
        self._httpd = self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        """The server's root (an Azure ``azure_endpoint``)."""
        return f"http://127.0.0.1:{self.port}"

    # --- script ---

    def push(self, *answers: Scripted) -> None:
        with self._lock:
            self._script.extend(answers)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def release(self) -> None:
        """Let every held request (and every later one) answer."""
        self._released.set()

    def wait_for_requests(self, count: int) -> None:
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= count, HANG_GUARD):
                raise AssertionError(f"expected {count} requests, got {len(self.requests)}")

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()

    def _next(self) -> Scripted | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    def _authorized(self, request: Request) -> bool:
        if self.key is None:
            return True
        if request.deployment is not None:
            return request.headers.get("api-key") == self.key
        return request.headers.get("authorization") == f"Bearer {self.key}"

    def wait_released(self) -> None:
        self._released.wait(HANG_GUARD)


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read ``requests``
        return None

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        request = Request(parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()}, body)
        self.owner._record(request)
        if parts.path != "/v1/chat/completions" and request.deployment is None:
            self._send(error(404, f"no route {parts.path}", code="not_found"))
            return
        if not self.owner._authorized(request):
            self._send(error(401, "Incorrect API key provided.", code="invalid_api_key"))
            return
        if self.owner.require_image and not request.has_image():
            self._send(error(400, "test server: no image part in the request", code="no_image"))
            return
        answer = self.owner._next()
        if isinstance(answer, Hold):
            self.owner.wait_released()
            answer = answer.then if answer.then is not None else Drop()
        if answer is None:
            answer = error(400, "test server: no scripted answer left", code="script_exhausted")
        if isinstance(answer, Drop):
            self.close_connection = True
            return  # the handler returns without a status line: the client sees the connection close
        self._send(answer)

    def _send(self, reply: Reply) -> None:
        payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        data = payload.encode("utf-8")
        try:
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): nothing to answer
