"""The prompt: strict templates, every optional part present and absent, the reply schema."""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any

import pytest

from tests.fakes import SCREEN_XML, FakeDriver, blank_png
from ufo_mobile.core.device.base import AppInfo, CurrentApp
from ufo_mobile.core.llm.prompt import PromptError, PromptTemplates
from ufo_mobile.core.llm.reply import parse_reply
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.llm.structured import OutputSpec
from ufo_mobile.core.memory.messages import ImagePart, TextPart
from ufo_mobile.core.memory.records import StepRecord
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.processors.llm_interaction import LLMInteraction
from ufo_mobile.core.tools.build import build_tool_registry
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.core.ui.format import FormatOptions, screen_legend
from ufo_mobile.core.ui.provider import AndroidStateProvider
from ufo_mobile.core.ui.screen_images import ScreenImages
from ufo_mobile.core.ui.state import build_ui_state


def registry() -> ToolRegistry:
    from pathlib import Path

    from ufo_mobile.settings import ModelSettings, Settings, TaskSettings

    driver = FakeDriver()
    settings = Settings(task=TaskSettings(text="t"), model=ModelSettings(script=Path("unused.yaml")))
    return build_tool_registry(settings, driver, AndroidStateProvider(driver), CredentialManager())


def observation(clean: bool = False) -> Observation:
    ui = build_ui_state(SCREEN_XML, observation_id="obs-1", format_options=FormatOptions(legend=False))
    png = blank_png()
    return Observation("obs-1", png, ui, CurrentApp("com.example.app"),
                       [AppInfo("com.android.settings", "Settings")], (1080, 2400),
                       model_image_size=(540, 1200), model_image_with_clean=clean, model_image_scale=0.5,
                       images=ScreenImages(png, ui.elements))


class SeeingModel(ScriptedModel):
    reads_images = True  # a stand-in for a model that reads pixels


def test_templates_are_strict_both_ways() -> None:
    templates = PromptTemplates({"t": "hello $name"})
    assert templates.render("t", name="you") == "hello you"
    with pytest.raises(PromptError, match=r"missing \['name'\]"):
        templates.render("t")
    with pytest.raises(PromptError, match=r"unused \['extra'\]"):
        templates.render("t", name="you", extra=1)


def test_every_packaged_template_has_its_placeholders_filled_by_the_agent() -> None:
    templates = PromptTemplates.load("mobile_agent")
    assert set(templates.names) == {"system", "secrets", "user", "plan", "memory", "screen", "blocked", "reask",
                                    "output_schema"}
    for name in templates.names:
        values = {p: f"<{p}>" for p in templates.placeholders(name)}
        assert "$" not in templates.render(name, **values)


@pytest.mark.parametrize(("plan", "memory", "secrets", "vision", "clean"),
                         list(itertools.product([False, True], repeat=5)))
def test_every_optional_part_present_and_absent(plan: bool, memory: bool, secrets: bool, vision: bool,
                                               clean: bool) -> None:
    shared = SharedState(plan=["open Settings", "tap Wi-Fi"] if plan else [],
                         memory=["the code is 4411"] if memory else [])
    ctx = StepContext(run_id="r", step=2, agent_name="A", request="Turn on Wi-Fi", shared=shared,
                      observation=observation(clean))
    phase = LLMInteraction(SeeingModel(Script(replies=["x"])), registry(), vision=vision, clean_screenshot=clean,
                           secret_ids=["github_password"] if secrets else [])
    system, user = phase.build_messages(ctx)
    system_text, user_text = system.text(), user.text()
    for text in (system_text, user_text):
        assert "$" not in text and "None" not in text and "\n\n\n" not in text
    assert "\n".join(screen_legend()) in system_text and "Controls: id Class" not in user_text  # legend once
    assert "- click(index: int" in system_text and "- complete(success: bool" in system_text
    assert "User request: Turn on Wi-Fi" in user_text and "Installed apps: Settings\n" in user_text
    assert '1 Button "Wi-Fi"' in user_text or "Wi-Fi" in user_text
    assert ("Your plan so far: open Settings; tap Wi-Fi" in user_text) is plan
    assert ("- the code is 4411" in user_text) is memory
    assert ("type_secret" in system_text and "github_password" in system_text) is secrets
    images = [p for p in user.content if isinstance(p, ImagePart)] if not isinstance(user.content, str) else []
    picture = ctx.observation.model_picture() if ctx.observation else None
    assert picture is not None and picture.data.startswith(b"\xff\xd8\xff") and (picture.clean is not None) is clean
    assert [i.data for i in images] == ([picture.data] + ([picture.clean] if clean else [])) * vision
    labels = ["annotated screenshot obs-1"] + (["screenshot obs-1"] if clean else [])
    assert [i.label for i in images] == labels * vision
    assert all(i.detail == "high" for i in images)
    assert isinstance(user.content, list) and isinstance(user.content[0], TextPart)


@pytest.mark.parametrize(("output", "blocked", "history"), list(itertools.product([False, True], repeat=3)))
def test_the_answer_schema_the_black_screenshot_and_the_history_present_and_absent(output: bool, blocked: bool,
                                                                                  history: bool) -> None:
    records = [StepRecord(step=n, agent="A", status="CONTINUE", action={"name": "wait"}, action_text=f"wait(n={n})",
                          success=True, summary=f"waited {n} s", raw_reply=f'{{"step": {n}}}',
                          observation="the event starts at 10:30" if n == 1 else "") for n in range(1, 5)]
    obs = observation()
    if blocked:  # a secure screen: its screenshot is black, no picture goes
        obs = dataclasses.replace(obs, screenshot_blocked=True, model_image_size=None)
    ctx = StepContext(run_id="r", step=5, agent_name="A", request="Read the total", observation=obs,
                      shared=SharedState(step_records=records if history else []))
    phase = LLMInteraction(SeeingModel(Script(replies=["x"])), registry(), history_steps=2,
                           output=OutputSpec(source="schema", json_schema={"type": "number"}) if output else None)
    ctx.shared.screen_changes = {"2": "a dialog 'Delete event?' appeared", "4": "nothing on the screen changed"}
    system, *past, user = phase.build_messages(ctx)
    system_text, user_text = system.text(), user.text()
    for text in (system_text, user_text):
        assert "$" not in text and "None" not in text and "\n\n\n" not in text
    assert ('The user wants the final answer as data' in system_text and '"type": "number"' in system_text) is output
    assert ("The screenshot of this screen is black" in user_text) is blocked
    assert isinstance(user.content, list)
    assert len([p for p in user.content if isinstance(p, ImagePart)]) == (0 if blocked else 1)
    # bounded: the last two steps as they were, the two before them in one line each that keeps what
    # the model saw and what changed on the screen
    expected = ["Earlier turns, in short:\n- turn 1: wait(n=1) -> ok; you saw: the event starts at 10:30\n"
                "- turn 2: wait(n=2) -> ok; then: a dialog 'Delete event?' appeared",
                '{"step": 3}', "Turn 3: action wait(n=3) succeeded: waited 3 s",
                '{"step": 4}', "Turn 4: action wait(n=4) succeeded: waited 4 s\nThen on the screen: nothing on the "
                "screen changed"] if history else []
    assert [m.text() for m in past] == expected


def test_the_reply_schema_names_each_action_the_prompt_lists() -> None:
    phase = LLMInteraction(ScriptedModel(Script(replies=["x"])), registry())
    schema = phase.schema
    assert schema["properties"]["actions"]["maxItems"] == 5  # agent.max_actions_per_turn
    action = schema["properties"]["actions"]["items"]
    names = action["properties"]["name"]["enum"]
    assert names[:3] == ["click", "long_press", "click_at"] and "complete" in names
    assert all(f"- {name}(" in phase.system_prompt((1080, 2400)) for name in names)  # each one explained
    # the statuses the prompt explains, never CONFIRM (the runtime's own)
    assert schema["properties"]["status"]["enum"] == ["CONTINUE", "FINISH", "FAIL", "PENDING", "TAKEOVER"]
    assert schema["properties"]["remember"] == {"type": "array", "items": {"type": "string"}}
    assert action["properties"]["confirm"] == {"type": "boolean"}
    json.dumps(schema)  # sendable


async def test_the_schema_goes_to_the_model_and_each_call_is_recorded() -> None:
    seen: list[Any] = []

    class Recording(ScriptedModel):
        async def complete(self, messages: Any, *, schema: Any = None) -> Any:
            seen.append(schema)
            return await super().complete(messages, schema=schema)

    model = Recording(Script(replies=["not json", {"status": "FINISH", "result": "done"}]))
    phase = LLMInteraction(model, registry())
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState(), observation=observation())
    await phase.run(ctx)
    assert seen == [phase.schema, phase.schema]
    assert [c["calls"] for c in ctx.model_calls] == [1, 1] and ctx.usage.calls == 2
    assert parse_reply(ctx.raw_replies[-1]).status == "FINISH"


async def test_an_action_with_wrong_arguments_is_re_asked_and_never_run() -> None:
    wrong = {"status": "CONTINUE", "actions": [{"name": "wait", "args": {"duration": 1}},
                                                {"name": "click", "args": {"index": "the second"}}]}
    right = {"status": "CONTINUE", "actions": [{"name": "click", "args": {"index": 2}}]}
    phase = LLMInteraction(ScriptedModel(Script(replies=[wrong, right])), registry())
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState(), observation=observation())
    await phase.run(ctx)
    assert [a.name for a in ctx.actions] == ["click"] and ctx.usage.calls == 2  # the wait did not run either
    assert ctx.parse_errors and "action 2: bad arguments for click: index" in ctx.parse_errors[0]
    unknown = {"status": "CONTINUE", "actions": [{"name": "tap", "args": {}}]}
    phase = LLMInteraction(ScriptedModel(Script(replies=[unknown, right])), registry())
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState(), observation=observation())
    await phase.run(ctx)
    assert "action 1: unknown tool 'tap'" in ctx.parse_errors[0] and ctx.usage.calls == 2


@pytest.mark.parametrize("clean", [False, True])
async def test_a_model_that_reads_no_images_gets_the_parts_without_the_encoding(clean: bool) -> None:
    obs = observation(clean)
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="Turn on Wi-Fi", shared=SharedState(),
                      observation=obs)
    blind = LLMInteraction(ScriptedModel(Script(replies=["x"])), registry(), clean_screenshot=clean)
    _, user = await blind.conversation(ctx)
    images = [p for p in user.content if isinstance(p, ImagePart)] if not isinstance(user.content, str) else []
    expected = [("annotated screenshot obs-1", b"")] + [("screenshot obs-1", b"")] * clean
    assert [(i.label, i.data) for i in images] == expected
    assert obs.images is not None and obs.images._models == {}  # nothing was made for it
    seeing = LLMInteraction(SeeingModel(Script(replies=["x"])), registry(), clean_screenshot=clean)
    _, user = await seeing.conversation(ctx)
    assert len(obs.images._models) == 1  # made once, off the loop, then read from the cache
    sent = [p.data for p in user.content if isinstance(p, ImagePart)] if not isinstance(user.content, str) else []
    assert len(sent) == 1 + clean and all(data.startswith(b"\xff\xd8\xff") for data in sent)
