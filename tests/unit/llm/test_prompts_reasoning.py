"""The prompts of reasoning mode and its sub-agents: every template renders with exactly the
placeholders it declares, and each prompt's own example of a reply passes that reply's parser."""

from __future__ import annotations

import pytest

from ufo_mobile.core.llm.manager_reply import parse_manager_reply
from ufo_mobile.core.llm.prompt import PromptError, PromptTemplates
from ufo_mobile.core.llm.reply import parse_reply
from ufo_mobile.core.llm.subagent_reply import parse_code_reply, parse_text_reply
from ufo_mobile.core.processors.codeact import python_signatures
from ufo_mobile.core.status import MODEL_STATUSES

EXPECTED = {
    "manager": {
        "system": {"actions", "width", "height", "legend", "person", "untrusted", "script_item", "phone"},
        "script_item": set(),
        "output_schema": {"schema"},
        "user": {"request", "current_app", "apps"}, "device_date": {"date"}, "app_card": {"app", "card"},
        "memory": {"memory"},
        "executor_facts": {"facts"}, "previous_plan": {"plan"}, "recent_actions": {"outcomes"},
        "error_history": {"errors"}, "replan": {"failures", "attempts"},
        "scripter_result": {"task", "status", "output"}, "screen": {"screen"}, "blocked": set(), "reask": {"error"},
    },
    "executor": {
        "system": {"legend", "actions", "max_actions", "labels", "approval", "person",
                   "untrusted", "phone"},
        "secrets": {"ids"}, "recent_actions": {"outcomes"},
        "user": {"budget", "request", "plan", "subgoal", "current_app", "screen"}, "blocked": set(),
        "reask": {"error"},
    },
    "text_manipulator": {"system": {"phone"}, "user": {"request", "instruction", "text"}, "reask": {"error"}},
    "scripter": {"system": {"timeout"}, "user": {"request", "task"}, "retry": {"output"}, "reask": {"error"}},
    "codeact": {
        "system": {"legend", "tools", "labels", "approval", "person", "untrusted", "phone"},
        "secrets": {"ids"}, "output_schema": {"schema"}, "budget": {"budget"}, "memory": {"memory"},
        "older": {"turns"}, "latest": {"turns"}, "user": {"request", "current_app", "apps", "screen"},
        "blocked": set(), "reask": {"error"},
    },
    "ui_tars": {
        "system": {"untrusted", "approval", "person", "phone"}, "request": {"request"},
        "user": {"picture", "budget", "current_app", "apps"}, "output_schema": {"schema"},
        "memory": {"memory"},
        "blocked": set(), "reask": {"error"},
    },
    "qwen_vl": {
        "system": {"untrusted", "approval", "person", "coordinates", "phone"}, "request": {"request"},
        "user": {"picture", "budget", "current_app", "apps"}, "output_schema": {"schema"},
        "memory": {"memory"}, "blocked": set(), "reask": {"error"},
    },
    "autoglm": {
        "system": {"untrusted", "approval", "person", "phone"}, "request": {"request"},
        "user": {"picture", "budget", "current_app", "apps"}, "output_schema": {"schema"},
        "memory": {"memory"}, "blocked": set(), "reask": {"error"},
    },
    "contract": {
        "approval": {"flag", "plain", "then"}, "person_present": set(), "person_absent_refuse": set(),
        "person_absent_stop": set(), "person_absent_approve": set(), "labels": set(), "untrusted": set(),
        "untrusted_no_screenshot": set(), "iphone": set(),
    },
}


def python_signatures_text() -> str:
    from tests.unit.llm.test_prompt import registry

    return python_signatures(registry())


def render(file: str, template: str) -> str:
    templates = PromptTemplates.load(file)
    return templates.render(template, **{p: f"<{p}>" for p in templates.placeholders(template)})


@pytest.mark.parametrize("file", sorted(EXPECTED))
def test_every_template_renders_with_the_placeholders_it_declares(file: str) -> None:
    templates = PromptTemplates.load(file)
    assert {name: templates.placeholders(name) for name in templates.names} == EXPECTED[file]
    for name in templates.names:
        text = render(file, name)
        assert text and "$" not in text and "\n\n\n" not in text, name
        for placeholder in templates.placeholders(name):
            assert f"<{placeholder}>" in text, (name, placeholder)
    with pytest.raises(PromptError):
        templates.render(templates.names[0], unexpected="x")


def test_the_manager_prompt_teaches_its_reply_format() -> None:
    system = render("manager", "system")
    for part in ("<thought>", "<add_memory>", "<plan>", "TEXT_TASK:",
                 '<request_accomplished success="true">', '<request_accomplished success="false">', "<actions>"):
        assert part in system, part
    replan = render("manager", "replan")
    assert "<failures> times in a row" in replan and "<attempts>" in replan and "changed plan" in replan
    assert "<script>" in render("manager", "script_item") and "</script>" in render("manager", "script_item")
    assert "<schema>" in render("manager", "output_schema")
    for name in ("reask", "screen"):
        assert "<plan>" in render("manager", name) and "<request_accomplished" in render("manager", name)


def test_a_reply_written_as_the_manager_prompt_says_parses() -> None:
    system = render("manager", "system")
    plan_example = system[system.index("<plan>\n"): system.index("</plan>") + len("</plan>")]
    reply = parse_manager_reply(f"<thought>t</thought>\n<add_memory>a fact</add_memory>\n{plan_example}")
    assert reply.plan is not None and [s.text for s in reply.plan] == ["The next subgoal", "The subgoal after it"]
    final_start = system.index('<request_accomplished success="true">The')
    final = system[final_start: system.index("</request_accomplished>", final_start) + len("</request_accomplished>")]
    assert parse_manager_reply(final).final is not None


def test_the_executor_uses_the_flat_agents_reply_format() -> None:
    system = render("executor", "system")
    flat = render("mobile_agent", "system")
    for field in ('"status"', '"observation"', '"thought"', '"actions"', '"confirm"', '"remember"', '"result"'):
        assert field in system and field in flat, field
    assert '"plan"' in flat and '"plan"' not in system  # the planner plans
    for status in MODEL_STATUSES:
        assert f'"{status}"' in system and f'"{status}"' in flat, status
        assert f"- {status}: " in system and f"- {status}: " in flat, status  # each status is explained
    reply = parse_reply('{"status": "CONTINUE", "observation": "o", "thought": "t", "remember": ["a fact"],'
                        ' "actions": [{"name": "click", "args": {"index": 4, "text": "Wi-Fi"}, "confirm": false}]}')
    assert reply.action is not None and reply.remember == ["a fact"]
    user = render("executor", "user")
    assert user.index("<subgoal>") < user.index("<screen>") and "<plan>" in user


def test_each_sub_agent_prompt_shows_a_reply_its_parser_accepts() -> None:
    assert parse_text_reply(render("text_manipulator", "system")) == "The complete new text of the field."
    assert parse_code_reply(render("scripter", "system")) == "<the whole script>"
    assert parse_code_reply(render("codeact", "system")) == 'click(index=7, text="Save")'
    codeact = render("codeact", "system")
    assert "complete(success=True" in codeact and "No imports" in codeact and "screen()" in codeact
    assert "complete(success: bool, message: str)" in python_signatures_text()  # one name for each argument
    assert "type(text: str, index: int = None, clear: bool = False)" in python_signatures_text()  # Python's words
    assert "reason=" not in codeact and 'message="' in codeact
    assert "<timeout> seconds" in render("scripter", "system") and "urllib" in render("scripter", "system")
    user = render("text_manipulator", "user")
    assert "<current_text>\n<text>\n</current_text>" in user and "<instruction>" in user


def test_the_planner_is_told_how_to_read_the_screen_list_it_is_sent() -> None:
    from tests.unit.llm.test_prompt import registry
    from ufo_mobile.core.llm.scripted import Script, ScriptedModel
    from ufo_mobile.core.processors.reasoning import ManagerInteraction
    from ufo_mobile.core.ui.format import screen_legend

    system = ManagerInteraction(ScriptedModel(Script(replies=["x"])), registry()).system_prompt((720, 1600))
    assert "\n".join(screen_legend()) in system  # the places, the flags and the nesting, as the executor reads them
    assert "720 x 1600 pixels" in system


def test_the_planner_is_taught_script_items_only_when_they_are_on() -> None:
    from tests.unit.llm.test_prompt import registry
    from ufo_mobile.core.llm.scripted import Script, ScriptedModel
    from ufo_mobile.core.processors.reasoning import ManagerInteraction

    def system(scripts: bool) -> str:
        model = ScriptedModel(Script(replies=["x"]))
        return ManagerInteraction(model, registry(), scripter_enabled=scripts).system_prompt((720, 1600))

    on, off = system(True), system(False)
    assert "<script>" in on and "and put back.\n- Work that needs no phone" in on  # the last plan rule
    assert "<script>" not in off and "script" not in off.casefold()  # never described, then forbidden
    assert "\n\n\n" not in on + off and "put back.\n\nEnding the task:" in off
