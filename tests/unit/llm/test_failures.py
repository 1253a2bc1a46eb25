"""What each failed attempt means, and the one-line messages that say what to fix."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest

from ufo_mobile.core.llm.endpoint import Endpoint
from ufo_mobile.core.llm.failures import Failure, Verdict, classify

KEY = "sk-secret-abcdef123456"
OPENAI = Endpoint("openai", "gpt-4o", "https://api.openai.com/v1", KEY, "OPENAI_API_KEY")
AZURE = Endpoint("azure", "prod-4o", "https://r.openai.azure.com", KEY, "AZURE_OPENAI_API_KEY", "2024-10-21")
LOCAL = Endpoint("openai_compatible", "llama3.1:8b", "http://localhost:11434/v1")
CLASSES: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
    404: openai.NotFoundError, 422: openai.UnprocessableEntityError, 429: openai.RateLimitError}


def status_error(status: int, message: str = "", *, code: str | None = None, param: str | None = None,
                 headers: dict[str, str] | None = None, body: Any = None) -> openai.APIStatusError:
    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx2.Response(status, headers=headers or {}, request=request)
    if body is None:
        body = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    cls = CLASSES.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return cls(f"Error code: {status} - {message}", response=response, body=body)


def judge(exc: BaseException, endpoint: Endpoint = OPENAI, *, structured: bool = False) -> Failure:
    failure = classify(exc, endpoint, timeout=60, structured=structured, now=0.0)
    for text in (failure.summary, failure.message):
        assert "\n" not in text and KEY not in text
    return failure


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 529])
def test_transient_statuses_are_retried(status: int) -> None:
    failure = judge(status_error(status, "busy", headers={"retry-after": "3"}))
    assert (failure.verdict, failure.status, failure.retry_after) == (Verdict.RETRY, status, 3.0)
    assert failure.summary == f"HTTP {status}: busy"


def test_timeouts_and_dropped_connections_are_retried() -> None:
    request = httpx2.Request("POST", "http://x/v1/chat/completions")
    assert judge(TimeoutError()).summary == "timed out after 60 s (model.timeout_seconds)"
    assert judge(openai.APITimeoutError(request)).verdict is Verdict.RETRY
    dropped = openai.APIConnectionError(request=request)
    dropped.__cause__ = httpx2.RemoteProtocolError("Server disconnected without sending a response.")
    failure = judge(dropped)
    assert failure.verdict is Verdict.RETRY
    assert failure.summary == "connection failed (RemoteProtocolError: Server disconnected without sending a response.)"


def test_401_names_the_variable_the_key_came_from() -> None:
    failure = judge(status_error(401, f"Incorrect API key provided: {KEY}"))
    assert failure.verdict is Verdict.STOP
    assert failure.message == ("the model endpoint at https://api.openai.com/v1 refused the API key (HTTP 401): "
                               "check the key in $OPENAI_API_KEY")
    assert "***" in failure.summary  # the server echoed the key: masked
    local = judge(status_error(401, "no key"), LOCAL)
    assert "no key was sent: put the server's key in an environment variable and name it in model.api_key_env" \
        in local.message


def test_403_and_404_name_the_model_or_deployment() -> None:
    assert judge(status_error(403, "Project does not have access")).message == (
        "the model endpoint refused access to model 'gpt-4o' (HTTP 403: Project does not have access): check that "
        "the key from OPENAI_API_KEY may use it")
    assert judge(status_error(404, "The model `gpt-4o` does not exist")).message == (
        "model 'gpt-4o' not found at https://api.openai.com/v1 (HTTP 404): check model.name, and model.base_url "
        "(it usually ends in /v1)")
    assert judge(status_error(404, "DeploymentNotFound"), AZURE).message == (
        "deployment 'prod-4o' not found at https://r.openai.azure.com (HTTP 404): check model.azure_deployment "
        "(or model.name) and model.api_version (2024-10-21)")


@pytest.mark.parametrize(("message", "code"), [
    ("This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
     "context_length_exceeded"),
    ("the request exceeds the available context size, try increasing it", None),  # llama.cpp server
    ("This model's maximum context length is 8192 tokens", None),  # vLLM
])
def test_prompt_too_long_says_which_settings_shrink_it(message: str, code: str | None) -> None:
    failure = judge(status_error(400, message, code=code))
    assert failure.verdict is Verdict.STOP
    assert failure.message.startswith("the prompt is too long for model 'gpt-4o' (HTTP 400: ")
    assert failure.message.endswith("show fewer past steps (agent.history_steps) or smaller screenshots "
                                    "(perception.image_longest_side)")


def test_no_quota_is_not_retried() -> None:
    failure = judge(status_error(429, "You exceeded your current quota", code="insufficient_quota"))
    assert failure.verdict is Verdict.STOP
    assert "has no quota left (HTTP 429 insufficient_quota)" in failure.message


@pytest.mark.parametrize(("status", "message", "param"), [
    (400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
     "response_format"),
    (400, "json_schema is not supported", None),
    (422, "Unrecognized request argument supplied: response_format", None),
])
def test_structured_output_refusal(status: int, message: str, param: str | None) -> None:
    error = status_error(status, message, param=param)
    assert judge(error, structured=True).verdict is Verdict.NO_STRUCTURED_OUTPUT
    assert judge(error, structured=False).verdict is Verdict.STOP  # we did not send it: another problem


def test_other_rejections_quote_the_server_on_one_line() -> None:
    failure = judge(status_error(400, "Unsupported value: 'temperature' does not support 0 with this model.\n"
                                      "Only the default (1) value is supported."))
    assert failure.message == (
        "the model endpoint rejected the request (HTTP 400: Unsupported value: 'temperature' does not support 0 with "
        "this model. Only the default (1) value is supported.); set model.temperature: null for a model that takes "
        "no temperature")
    long = judge(status_error(400, "x" * 5000))
    assert len(long.message) < 400
    plain = judge(status_error(418, body="I'm a teapot\x1b[2J"))
    assert plain.summary == "HTTP 418: I'm a teapot\\x1b[2J"
