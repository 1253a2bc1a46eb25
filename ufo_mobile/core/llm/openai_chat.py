"""A real model behind the official ``openai`` SDK: OpenAI, Azure OpenAI, or any server that speaks
the chat-completions API (vLLM, Ollama, LM Studio, llama.cpp server, OpenRouter).

One ``complete`` is one logical call: attempts under a per-attempt timeout, retried by our own
policy (the SDK's retries are off), logged and reported to whoever watches the run live
(``ufo_mobile/core/trace/progress.py``), structured output with a remembered fallback to
plain JSON, and the usage and cost of the attempt that answered.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

import openai
import structlog
from openai.types.chat import ChatCompletion

from ufo_mobile.core.llm.base import Completion, Usage
from ufo_mobile.core.llm.endpoint import Endpoint, open_client, resolve_endpoint
from ufo_mobile.core.llm.failures import Failure, Verdict, classify
from ufo_mobile.core.llm.prices import PriceTable
from ufo_mobile.core.llm.retry import RetryBudget, RetryBudgetSpent, RetryClock, RetryPolicy
from ufo_mobile.core.llm.wire import WireReply, json_schema_format, read_reply, to_openai_messages
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.trace.progress import Progress, report
from ufo_mobile.errors import LLMError
from ufo_mobile.settings import ModelSettings

StructuredMode = Literal["json_schema", "off"]


class OpenAIChatModel:
    """``ChatModel`` over ``openai.AsyncOpenAI`` / ``openai.AsyncAzureOpenAI``.

    ``details`` of each completion: ``attempts``, ``seconds``, ``structured_output`` (``json_schema``
    when the schema was sent, ``off`` when not), ``fell_back`` (this call found structured output
    unsupported), ``model`` (the model the endpoint says answered), ``finish_reason``, ``priced_as``.
    """

    def __init__(self, client: openai.AsyncOpenAI, endpoint: Endpoint, settings: ModelSettings, *,
                 prices: PriceTable | None = None, clock: RetryClock | None = None, logger: Any = None) -> None:
        self.name = endpoint.model
        self.endpoint = endpoint
        self.settings = settings
        self.client = client
        self.prices = (prices or PriceTable.builtin()).with_overrides(settings.prices)
        self.policy = RetryPolicy.from_settings(settings.retry)
        self.clock = clock or RetryClock()
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.core.llm")
        # auto starts with the schema and drops it for good at the first refusal
        self.structured: StructuredMode = "off" if settings.structured_output == "off" else "json_schema"

    @classmethod
    def from_settings(cls, settings: ModelSettings, env: Mapping[str, str], *, prices: PriceTable | None = None,
                      clock: RetryClock | None = None, logger: Any = None) -> OpenAIChatModel:
        """Resolve the endpoint (a ``ConfigError`` names what is missing) and open the client."""
        endpoint = resolve_endpoint(settings, env)
        client = open_client(endpoint, timeout=settings.timeout_seconds)
        return cls(client, endpoint, settings, prices=prices, clock=clock, logger=logger)

    def secrets(self) -> list[str]:
        """The endpoint's API key (empty when it needs none): never to be written anywhere."""
        return self.endpoint.secrets()

    def bind_logger(self, logger: Any) -> None:
        """Log to the run's log from now on (the session calls this once the run directory exists)."""
        self._log = logger

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self.client.close()

    async def complete(self, messages: Sequence[ChatMessage], *,
                       schema: dict[str, Any] | None = None) -> Completion:
        """Send the conversation and return the reply, with its usage, cost and ``details``.

        Failed attempts are retried under the settings' retry policy. With ``schema``, the reply is
        asked for as structured output; an endpoint that refuses it (``structured_output: auto``) is
        sent no schema for the rest of the run.

        Raises:
            LLMError: the endpoint failed for good, kept failing until no retry was left, or sent a
                reply that cannot be read.
        """
        wire = to_openai_messages(messages)
        budget = RetryBudget(self.policy, self.clock)
        attempts = 0
        fell_back = False
        while True:
            mode: StructuredMode = self.structured if schema is not None else "off"
            attempts += 1
            try:
                response = await self._attempt(wire, json_schema_format(schema) if schema is not None
                                               and mode == "json_schema" else None)
            except (openai.OpenAIError, TimeoutError, json.JSONDecodeError) as exc:
                failure = classify(exc, self.endpoint, timeout=self.settings.timeout_seconds,
                                   structured=mode == "json_schema", now=self.clock.wall())
                if failure.verdict is Verdict.NO_STRUCTURED_OUTPUT and self.settings.structured_output == "auto":
                    self._fall_back(failure)
                    fell_back = True
                    continue  # the same call again without the schema: another request, not a retry
                if failure.verdict is not Verdict.RETRY:
                    raise LLMError(failure.message) from exc
                await self._wait(budget, failure, attempts, exc)
                continue
            return self._completion(response, attempts, budget, mode, fell_back)

    async def _attempt(self, wire: list[dict[str, Any]], response_format: dict[str, Any] | None) -> ChatCompletion:
        s, omit = self.settings, openai.omit
        # OpenAI and Azure take max_completion_tokens (reasoning models refuse max_tokens); other
        # servers know max_tokens far more widely
        compatible = self.endpoint.kind == "openai_compatible"
        headers = None if self.endpoint.key else {"Authorization": omit}  # keyless: send no key at all
        async with asyncio.timeout(s.timeout_seconds):  # a hard bound, even on a server that trickles bytes
            return await self.client.chat.completions.create(
                model=self.endpoint.model, messages=cast(Any, wire), timeout=s.timeout_seconds,
                max_tokens=s.max_tokens if compatible else omit,
                max_completion_tokens=omit if compatible else s.max_tokens,
                temperature=omit if s.temperature is None else s.temperature,
                response_format=omit if response_format is None else cast(Any, response_format),
                extra_headers=headers)

    async def _wait(self, budget: RetryBudget, failure: Failure, attempt: int, exc: BaseException) -> None:
        """Log the failed attempt and sleep before the next; raise LLMError when no retry is left."""
        try:
            delay, source = budget.next_delay(failure.retry_after)
        except RetryBudgetSpent as spent:
            raise LLMError(f"the model endpoint at {self.endpoint.shown} kept failing ({failure.summary}); "
                           f"{spent.reason}") from exc
        self._log.warning("model_retry", model=self.name, attempt=attempt, status=failure.status,
                          error=failure.summary, delay_seconds=round(delay, 3), delay_source=source,
                          elapsed_seconds=round(budget.elapsed(), 3))
        # counted in retries (a request without the schema after a refusal is not one)
        report(Progress("retry", text=failure.summary, delay=delay, attempt=budget.retries + 1,
                        attempts=self.policy.max_retries + 1))
        await self.clock.sleep(delay)

    def _fall_back(self, failure: Failure) -> None:
        self.structured = "off"
        self._log.warning("structured_output_unsupported", model=self.name, status=failure.status,
                          error=failure.summary,
                          note="sending no response_format for the rest of the run; replies are parsed as JSON")

    def _completion(self, response: ChatCompletion, attempts: int, budget: RetryBudget, mode: StructuredMode,
                    fell_back: bool) -> Completion:
        try:
            reply = read_reply(response)
        except ValueError as exc:
            raise LLMError(f"the model endpoint at {self.endpoint.shown} {exc}: check model.base_url") from exc
        answered = reply.model or self.endpoint.model
        usage, priced_as = self._usage(reply, answered)
        details = {"attempts": attempts, "seconds": round(budget.elapsed(), 3), "structured_output": mode,
                   "fell_back": fell_back, "model": answered, "finish_reason": reply.finish_reason,
                   "priced_as": priced_as}
        return Completion(text=reply.text, usage=usage, model=answered, details=details)

    def _usage(self, reply: WireReply, answered: str) -> tuple[Usage, str | None]:
        if reply.tokens is None:  # the server did not count: the cost is unknown
            return Usage(cost_usd=None, calls=1), None
        prompt, completion, cached = reply.tokens
        found = self.prices.price_for((answered, self.endpoint.model))
        cost = found[1].cost(prompt, cached, completion) if found is not None else None
        usage = Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=min(cached, prompt),
                      cost_usd=cost, calls=1)
        return usage, found[0] if found is not None else None
