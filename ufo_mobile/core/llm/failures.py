"""What a failed model call means: try again, fall back to plain JSON, or stop with what to fix.

Retried: 408, 409, 429 (but not ``insufficient_quota``), 5xx, timeouts and dropped connections.
Stopped at once, each with a one-line message saying what to fix: 401 (the key, and which variable
it came from), 403, 404 (the model or deployment, by name), a prompt over the context length (and
the settings that shrink it), no quota left, any other 4xx. A 400 or 422 about ``response_format``
is its own verdict: the endpoint does not do structured output.

Server text quoted in a message is cut to one line and has the key masked, in case the server
echoes it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

import openai

from ufo_mobile.core.llm.endpoint import Endpoint
from ufo_mobile.core.llm.retry import retry_after_seconds
from ufo_mobile.safe_text import printable

_CONTEXT = re.compile(r"context[_ ]length|maximum context|context window|context size|too many tokens"
                      r"|prompt is too long|input is too long|reduce the length", re.I)
_STRUCTURED = re.compile(r"response_format|json_schema|structured output", re.I)
_RETRY_STATUS = frozenset({408, 409, 429})
_QUOTE_LIMIT = 200
SHRINK_HINT = "show fewer past steps (agent.history_steps) or smaller screenshots (perception.image_longest_side)"


class Verdict(Enum):
    RETRY = "retry"
    STOP = "stop"
    NO_STRUCTURED_OUTPUT = "no_structured_output"


@dataclass(frozen=True)
class Failure:
    verdict: Verdict
    summary: str  # one line for logs and for the final message: "HTTP 500: ...", "timed out after 60 s"
    message: str = ""  # STOP: the LLMError text
    status: int | None = None
    retry_after: float | None = None  # seconds the server asked for


def classify(exc: BaseException, endpoint: Endpoint, *, timeout: float, structured: bool,
             now: float) -> Failure:
    """The verdict on one failed attempt.

    Args:
        exc: what the attempt raised: an ``openai`` error, ``TimeoutError`` from our own bound, or
            ``json.JSONDecodeError`` (the SDK's, for a 200 whose body is not JSON).
        structured: the attempt sent a JSON-schema ``response_format``.
        now: the wall clock (epoch seconds), for a ``Retry-After`` given as a date.
    """
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return Failure(Verdict.RETRY, f"timed out after {timeout:g} s (model.timeout_seconds)")
    if isinstance(exc, openai.APIConnectionError):
        return Failure(Verdict.RETRY, f"connection failed ({_quote(_cause(exc), endpoint)})")
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc, endpoint, structured=structured, now=now)
    if isinstance(exc, json.JSONDecodeError):  # a 200 with a web page: usually a wrong base URL
        return Failure(Verdict.STOP, "the answer is not JSON",
                       f"the model endpoint at {endpoint.shown} answered with something that is not JSON: check "
                       "model.base_url (an OpenAI-compatible API usually ends in /v1)")
    text = _quote(str(exc), endpoint)
    return Failure(Verdict.STOP, text, f"the model endpoint at {endpoint.shown} failed: {text}")


def _status_failure(exc: openai.APIStatusError, endpoint: Endpoint, *, structured: bool, now: float) -> Failure:
    status = exc.status_code
    said = _quote(_server_message(exc), endpoint)
    summary = f"HTTP {status}: {said}" if said else f"HTTP {status}"
    code = (exc.code or "").lower()
    if status == 429 and code == "insufficient_quota":
        return _stop(summary, status, f"the account behind the key from {_source(endpoint)} has no quota left "
                                      f"(HTTP 429 insufficient_quota): check its plan and billing")
    if status in _RETRY_STATUS or status >= 500:
        wait = retry_after_seconds(dict(exc.response.headers.items()), now=now)
        return Failure(Verdict.RETRY, summary, status=status, retry_after=wait)
    if status == 401:
        return _stop(summary, status, f"the model endpoint at {endpoint.shown} refused the API key (HTTP 401): "
                                      f"{endpoint.key_hint()}")
    if status == 403:
        return _stop(summary, status, f"the model endpoint refused access to model '{endpoint.model}' (HTTP 403: "
                                      f"{said}): check that the key from {_source(endpoint)} may use it")
    if status == 404:
        return _stop(summary, status, _not_found(endpoint))
    if status in (400, 413) and (code == "context_length_exceeded" or _CONTEXT.search(said) or status == 413):
        return _stop(summary, status, f"the prompt is too long for model '{endpoint.model}' ({summary}): {SHRINK_HINT}")
    if structured and status in (400, 422) and ((exc.param or "") == "response_format" or _STRUCTURED.search(said)):
        return Failure(Verdict.NO_STRUCTURED_OUTPUT, summary, status=status,
                       message=f"the model endpoint does not take a JSON-schema response_format ({summary}): set "
                               "model.structured_output to auto (fall back to plain JSON) or off")
    return _stop(summary, status, f"the model endpoint rejected the request ({summary}){_hint(said)}")


def _hint(said: str) -> str:
    if "temperature" in said.lower():
        return "; set model.temperature: null for a model that takes no temperature"
    return ""


def _stop(summary: str, status: int, message: str) -> Failure:
    return Failure(Verdict.STOP, summary, message, status=status)


def _not_found(endpoint: Endpoint) -> str:
    if endpoint.kind == "azure":
        return (f"deployment '{endpoint.model}' not found at {endpoint.shown} (HTTP 404): check "
                f"model.azure_deployment (or model.name) and model.api_version ({endpoint.api_version})")
    return (f"model '{endpoint.model}' not found at {endpoint.shown} (HTTP 404): check model.name, and "
            "model.base_url (it usually ends in /v1)")


def _source(endpoint: Endpoint) -> str:
    return endpoint.key_source or "(no key)"


def _server_message(exc: openai.APIStatusError) -> str:
    body: Any = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("message"), str):
            return str(body["message"])
    if isinstance(body, str):
        return body
    return ""


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)


def _quote(text: str, endpoint: Endpoint) -> str:
    """Server text as one safe line, with the key masked wherever it appears."""
    for secret in endpoint.secrets():
        text = text.replace(secret, "***")
    return printable(" ".join(text.split()), _QUOTE_LIMIT)
