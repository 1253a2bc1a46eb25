"""The manager's reply: plans with scripts and text tasks, final answers, every format error, memory."""

from __future__ import annotations

import pytest

from ufo_mobile.core.llm.manager_reply import (
    Final,
    ManagerReply,
    ManagerReplyError,
    Subgoal,
    parse_manager_reply,
    remember,
    render_plan,
)
from ufo_mobile.errors import LLMOutputParseError

FULL = """Sure, here is my answer.
```xml
<thought>Settings is open; Wi-Fi is the second row.</thought>
<add_memory>
- The network is called HomeNet
* the code is 4411
</add_memory>
<plan>
1. Tap Wi-Fi
2) TEXT_TASK: replace the name with "Office"
3. <script>
    import urllib.request
    if 1 < 2:
        print("<b>weather</b>")
    </script>
- Go back
• Open Settings
</plan>
```
Hope this helps!"""


def test_a_full_plan_with_every_kind_of_item() -> None:
    reply = parse_manager_reply(FULL)
    assert reply.thought == "Settings is open; Wi-Fi is the second row."
    assert reply.memory == ["The network is called HomeNet", "the code is 4411"]
    assert reply.final is None and reply.plan == [
        Subgoal(kind="action", text="Tap Wi-Fi"),
        Subgoal(kind="text_task", text='replace the name with "Office"'),
        Subgoal(kind="script", text='import urllib.request\nif 1 < 2:\n    print("<b>weather</b>")'),
        Subgoal(kind="action", text="Go back"),
        Subgoal(kind="action", text="Open Settings"),
    ]
    assert reply.current_subgoal == Subgoal(kind="action", text="Tap Wi-Fi")


def test_the_rendered_plan_parses_back_to_the_same_items() -> None:
    plan = parse_manager_reply(FULL).plan
    assert plan is not None
    text = render_plan(plan)
    assert text.startswith("1. Tap Wi-Fi\n2. TEXT_TASK: replace") and "3. <script>\nimport urllib" in text
    assert parse_manager_reply(f"<plan>\n{text}\n</plan>").plan == plan


@pytest.mark.parametrize(("attrs", "success"), [
    ('success="true"', True), ("success='FALSE'", False), ("success=True", True), ('  success = "false" ', False),
])
def test_a_final_answer(attrs: str, success: bool) -> None:
    reply = parse_manager_reply(f"<thought>done</thought>\n<request_accomplished {attrs}>\n 42 \n"
                                "</request_accomplished>")
    assert reply == ManagerReply(thought="done", final=Final(success=success, answer="42"))
    assert reply.current_subgoal is None


def test_lenient_parts_tags_in_any_case_several_thoughts_no_thought_one_line_items() -> None:
    reply = parse_manager_reply("<THOUGHT>a</THOUGHT> prose <Plan>Open Settings</Plan> <thought>b</thought>"
                                "<add_memory>one fact</add_memory><add_memory>another</add_memory>")
    assert reply.thought == "a\n\nb" and reply.memory == ["one fact", "another"]
    assert reply.plan == [Subgoal(kind="action", text="Open Settings")]
    one_line = parse_manager_reply("<plan><script>print(1)</script>\n2. text_task : shorten it</plan>")
    assert one_line.plan == [Subgoal(kind="script", text="print(1)"), Subgoal(kind="text_task", text="shorten it")]


def test_text_inside_thought_and_answer_is_raw() -> None:
    reply = parse_manager_reply('<thought>x < 3 and a <b>bold</b> word</thought>'
                                '<request_accomplished success="true">{"a": "<1>"}</request_accomplished>')
    assert reply.thought == "x < 3 and a <b>bold</b> word" and reply.final == Final(success=True, answer='{"a": "<1>"}')


@pytest.mark.parametrize(("text", "fragment"), [
    ("<thought>only thinking</thought>", "neither <plan> nor <request_accomplished"),
    ("no tags at all", "neither <plan> nor"),
    ('<plan>1. a</plan><request_accomplished success="true">x</request_accomplished>', "both <plan> and"),
    ("<plan>1. a</plan><plan>2. b</plan>", "2 <plan> tags: merge them"),
    ('<request_accomplished success="true">a</request_accomplished>'
     '<request_accomplished success="true">b</request_accomplished>', "2 <request_accomplished> tags"),
    ("<plan>\n\n 1. \n - \n</plan>", "the <plan> is empty"),
    ("<plan/>", "<plan/> has no content"),
    ("<plan>1. a", "<plan> is never closed: end it with </plan>"),
    ("<thought>x", "<thought> is never closed"),
    ("</plan>", "</plan> closes a tag that was never opened"),
    ("<answer>42</answer>", "unknown tag <answer>: use only <thought>"),
    ("<plan>1. a</plan><br/>", "unknown tag <br>"),
    ("<script>print(1)</script>", "<script> belongs inside <plan>"),
    ("<thought>hm <plan>1. a</plan></thought>", "<plan> is opened inside <thought>: close </thought> first"),
    ('<plan>1. a <request_accomplished success="true">x</request_accomplished></plan>',
     "<request_accomplished> is opened inside <plan>"),
    ('<plan id="1">a</plan>', "<plan> takes no attributes"),
    ("<request_accomplished>x</request_accomplished>", 'needs success="true" or success="false"'),
    ('<request_accomplished success="yes">x</request_accomplished>', 'success must be "true" or "false", not \'yes\''),
    ('<request_accomplished success="">x</request_accomplished>', 'success must be "true" or "false"'),
    ('<request_accomplished success="true" reason="x">y</request_accomplished>', "unknown attribute 'reason'"),
    ('<request_accomplished success="true" success="false">y</request_accomplished>', "success attribute twice"),
    ('<request_accomplished success>y</request_accomplished>', "cannot read the attributes"),
    ('<request_accomplished success="true" />', "has no content"),
    ('<request_accomplished success="false">  </request_accomplished>', "<request_accomplished> is empty"),
    ("<plan>1. Tap OK\n2. TEXT_TASK:   </plan>", "plan item 2: TEXT_TASK: needs the instruction"),
    ("<plan>1. Fetch it: <script>print(1)</script></plan>", "plan item 1: put <script> at the start of its own item"),
    ("<plan>1. a\n2. <script>print(1)\n</plan>", "plan item 2: <script> is never closed"),
    ("<plan>1. a\n<script>  </script></plan>", "plan item 2: the <script> is empty"),
    ("<plan><script>print(1)</script> then tap OK</plan>", "plan item 1: start a new line after </script>"),
    ("<plan>1. a\n</script></plan>", "</script> closes a script that was never opened"),
    ('<plan><script lang="py">x</script></plan>', "<script> takes no attributes"),
])
def test_errors_are_one_line_saying_what_to_fix(text: str, fragment: str) -> None:
    with pytest.raises(ManagerReplyError) as info:
        parse_manager_reply(text)
    message = str(info.value)
    assert fragment in message and "\n" not in message
    assert info.value.raw == text
    assert isinstance(info.value, ValueError) and isinstance(info.value, LLMOutputParseError)


def test_hostile_text_in_an_error_is_made_printable() -> None:
    with pytest.raises(ManagerReplyError) as info:
        parse_manager_reply('<request_accomplished success="tr\x1b[2Jue">x</request_accomplished>')
    assert "\x1b" not in str(info.value) and "\\x1b" in str(info.value)


@pytest.mark.parametrize("text", [
    "<a" * 500_000,
    "<" + "a" * 1_000_000,
    "<a " + " " * 1_000_000,
    "<plan>" + "x" * 1_000_000,
    "<thought>" + "<a " * 300_000 + "</thought>",
    '<request_accomplished success="' + "t" * 1_000_000,
    "<plan>" + "<script>" * 150_000 + "</plan>",
    "<plan>" + "<script " * 150_000 + "<b>",
])
def test_megabyte_replies_end_quickly(text: str) -> None:
    with pytest.raises(ManagerReplyError):  # a catastrophic backtrack would hang here instead
        parse_manager_reply(text)


def test_a_megabyte_plan_parses() -> None:
    reply = parse_manager_reply("<plan>\n" + "1. tap\n" * 150_000 + "</plan>")
    assert reply.plan is not None and len(reply.plan) == 150_000


def test_the_model_itself_keeps_its_contract() -> None:
    with pytest.raises(ValueError, match="exactly one of 'plan', 'final' and 'question'"):
        ManagerReply()
    with pytest.raises(ValueError, match="at least one subgoal"):
        ManagerReply(plan=[])
    with pytest.raises(ValueError):
        Subgoal(kind="action", text="")


def test_remember_appends_dedupes_truncates_and_keeps_the_last() -> None:
    existing = ["The code is 4411", "Wi-Fi is on"]
    out = remember(existing, ["the  CODE is\t4411", "", "  ", "Battery at 80%", "battery at 80%",
                              "x" * 400, "x" * 299 + "y" * 5], max_chars=300)
    assert existing == ["The code is 4411", "Wi-Fi is on"]  # not changed in place
    assert out[:3] == ["The code is 4411", "Wi-Fi is on", "Battery at 80%"]
    assert out[3] == "x" * 299 + "…" and len(out) == 4  # the second long item cuts to the same text
    assert remember([], ["a\nb  c"]) == ["a b c"]
    assert remember([str(n) for n in range(20)], ["new"], limit=20) == [*map(str, range(1, 20)), "new"]
    assert remember(["a", "b", "c"], [], limit=2) == ["b", "c"]
    with pytest.raises(ValueError, match="at least 1"):
        remember([], ["a"], limit=0)
