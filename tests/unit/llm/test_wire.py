"""Our messages as the chat-completions API takes them."""

from __future__ import annotations

import base64
from types import SimpleNamespace as NS
from typing import Any

import pytest

from ufo_mobile.core.llm.reply import AgentReply
from ufo_mobile.core.llm.wire import WireReply, json_schema_format, read_reply, to_openai_messages
from ufo_mobile.core.memory.messages import ChatMessage, ImagePart, TextPart
from ufo_mobile.core.processors.llm_interaction import reply_schema
from ufo_mobile.core.tools.build import register_builtin_tools
from ufo_mobile.core.tools.registry import ToolRegistry

PNG = b"\x89PNG\r\n\x1a\nfake"


def test_roles_text_and_images() -> None:
    messages = [
        ChatMessage(role="system", content="You operate a phone."),
        ChatMessage(role="user", content=[TextPart(text="Screen:"), ImagePart(data=PNG, detail="low")]),
        ChatMessage(role="assistant", content=[TextPart(text="{"), TextPart(text="}")]),
    ]
    system, user, assistant = to_openai_messages(messages)
    assert system == {"role": "system", "content": "You operate a phone."}
    assert user["role"] == "user"
    text, image = user["content"]
    assert text == {"type": "text", "text": "Screen:"}
    assert image["type"] == "image_url" and image["image_url"]["detail"] == "low"
    url = image["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == PNG
    assert assistant == {"role": "assistant", "content": "{\n}"}


def test_a_jpeg_is_sent_as_a_jpeg_data_url() -> None:
    jpeg = b"\xff\xd8\xff\xe0fake"
    (user,) = to_openai_messages([ChatMessage(role="user", content=[ImagePart(data=jpeg)])])
    url = user["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,") and base64.b64decode(url.split(",", 1)[1]) == jpeg


def test_an_image_outside_a_user_message_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="a system message cannot carry an image"):
        to_openai_messages([ChatMessage(role="system", content=[ImagePart(data=PNG)])])


def test_json_schema_format_is_not_strict() -> None:
    schema = AgentReply.model_json_schema()
    rf = json_schema_format(schema)
    assert rf["type"] == "json_schema"
    assert rf["json_schema"]["name"] == "AgentReply"
    assert rf["json_schema"]["strict"] is False
    assert rf["json_schema"]["schema"] == schema
    assert json_schema_format({"title": "my reply!", "type": "object"})["json_schema"]["name"] == "my_reply_"
    assert json_schema_format({"type": "object"})["json_schema"]["name"] == "reply"


def completion(content: Any = "hi", usage: Any = None, **over: Any) -> NS:
    message = NS(content=content, refusal=over.pop("refusal", None))
    fields = {"choices": [NS(message=message, finish_reason="stop")], "model": "gpt-4o-2024-08-06", "usage": usage}
    return NS(**{**fields, **over})


def test_read_reply_takes_text_model_and_token_counts() -> None:
    usage = NS(prompt_tokens=100, completion_tokens=20, prompt_tokens_details=NS(cached_tokens=64))
    assert read_reply(completion(usage=usage)) == WireReply("hi", "stop", "gpt-4o-2024-08-06", (100, 20, 64))
    no_details = NS(prompt_tokens=100, completion_tokens=20, prompt_tokens_details=None)
    assert read_reply(completion(usage=no_details)).tokens == (100, 20, 0)


@pytest.mark.parametrize("usage", [None, NS(prompt_tokens="100", completion_tokens=2, prompt_tokens_details=None),
                                   NS(prompt_tokens=-1, completion_tokens=2, prompt_tokens_details=None),
                                   NS(prompt_tokens=True, completion_tokens=2, prompt_tokens_details=None)])
def test_odd_token_counts_are_no_counts(usage: Any) -> None:
    assert read_reply(completion(usage=usage)).tokens is None


def test_odd_replies_are_empty_text_not_crashes() -> None:
    assert read_reply(completion(content=None, refusal="I can't help with that")).text == "I can't help with that"
    assert read_reply(completion(content=[{"type": "text"}])).text == ""
    assert read_reply(completion(choices=[])) == WireReply("", None, "gpt-4o-2024-08-06", None)
    assert read_reply(completion(model=None)).model is None
    for broken in (None, [1, 2], NS(choices=None)):
        with pytest.raises(ValueError, match="not a chat completion"):
            read_reply(broken)


def test_the_reply_schema_holds_the_shape_and_names_each_action_once() -> None:
    tools = ToolRegistry()
    register_builtin_tools(tools)
    schema = reply_schema(tools)
    action = schema["properties"]["actions"]["items"]
    assert action["properties"]["name"]["enum"] == tools.names()  # only the actions offered
    assert action["required"] == ["name", "args"] and action["properties"]["args"] == {"type": "object"}
    assert schema["properties"]["status"]["enum"] == ["CONTINUE", "FINISH", "FAIL", "PENDING", "TAKEOVER"]
    assert "plan" not in reply_schema(tools, with_plan=False)["properties"]  # the executor keeps none
    tools.disable(["click_at"])
    assert "click_at" not in reply_schema(tools)["properties"]["actions"]["items"]["properties"]["name"]["enum"]
