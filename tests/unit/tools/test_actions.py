"""Every built-in action on the simulated phone, judged by the phone's state afterwards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FakeDriver
from tests.unit.tools.conftest import Harness
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.memory.reducers import apply_update
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.action_execution import ActionExecution
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.session import Session
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.settings import AgentSettings, LogSettings, ModelSettings, Settings, TaskSettings

SETTINGS, CONTACTS, NOTES = "com.android.settings", "com.android.contacts", "com.example.notes"
LAUNCHER = "com.android.launcher3"


def foreground(sim: SimDriver) -> str:
    return sim.phone.current_app().package


async def wifi_page(phone: Harness, sim: SimDriver) -> int:
    sim.phone.start_app(SETTINGS, "wifi")
    await phone.observe()
    return phone.index("Use Wi-Fi")


async def test_click_turns_wifi_on(sim: SimDriver, phone: Harness) -> None:
    switch = await wifi_page(phone, sim)
    result = await phone.act("click", index=switch, text="use wi-fi")
    assert result.success, result.summary
    assert sim.phone.state(SETTINGS)["wifi"] is True
    assert result.summary.startswith(f"clicked [{switch}] 'Use Wi-Fi' at (")


async def test_click_text_of_an_inner_control_is_accepted(sim: SimDriver, phone: Harness) -> None:
    sim.phone.start_app(SETTINGS)
    ui = await phone.observe()
    row = ui.get_control(phone.index("Wi-Fi")).parent  # the clickable row has no text of its own
    result = await phone.act("click", index=row, text="Wi-Fi")
    assert result.success, result.summary
    assert sim.phone.current_screen() == "wifi"


async def test_click_with_the_wrong_text_is_refused_and_does_nothing(sim: SimDriver, phone: Harness) -> None:
    switch = await wifi_page(phone, sim)
    result = await phone.act("click", index=switch - 1, text="Use Wi-Fi")
    assert not result.success
    assert f"control {switch - 1} is labelled 'Wi-Fi', not 'Use Wi-Fi'" in result.summary
    assert sim.phone.state(SETTINGS)["wifi"] is False


async def test_the_label_check_compares_whole_labels(sim: SimDriver, phone: Harness) -> None:
    """A part of a label is not the label ("Wi-Fi" is not "Use Wi-Fi"); case and spacing do not count."""
    switch = await wifi_page(phone, sim)
    part = await phone.act("click", index=switch, text="Wi-Fi")
    assert not part.success and f"control {switch} is labelled 'Use Wi-Fi', not 'Wi-Fi'" in part.summary
    assert sim.phone.state(SETTINGS)["wifi"] is False
    loose = await phone.act("click", index=switch, text="  use   WI-FI ")
    assert loose.success, loose.summary
    assert sim.phone.state(SETTINGS)["wifi"] is True


async def test_a_clickable_rows_label_is_the_label_of_a_control_inside_it(sim: SimDriver, phone: Harness) -> None:
    await sim.start_app(SETTINGS, ".Settings")
    await phone.observe()
    assert phone.ui is not None
    label = phone.index("Bluetooth")
    row = label - 1  # the clickable row the label sits in
    assert phone.ui.get_control(row).node.clickable and not phone.ui.get_control(label).node.clickable
    result = await phone.act("click", index=row, text="bluetooth")
    assert result.success, result.summary
    assert sim.phone.current_screen() == "bluetooth"


async def test_click_on_a_stale_observation_is_refused(sim: SimDriver, phone: Harness) -> None:
    switch = await wifi_page(phone, sim)
    ctx = await phone.context()
    ctx.observation_id = "test-0"  # the model answered about an older screen
    result = await phone.registry.execute("click", {"index": switch}, ctx)
    assert not result.success and "test-0" in result.summary
    assert sim.phone.state(SETTINGS)["wifi"] is False


async def test_click_at_and_click_area_hit_the_switch(sim: SimDriver, phone: Harness) -> None:
    switch = await wifi_page(phone, sim)
    assert phone.ui is not None
    box = phone.ui.get_control(switch).bounds
    result = await phone.act("click_at", x=box.center[0], y=box.center[1])
    assert result.success and result.summary.endswith(f"on [{switch}] 'Use Wi-Fi'")
    assert sim.phone.state(SETTINGS)["wifi"] is True
    result = await phone.act("click_area", x1=box.left, y1=box.top, x2=box.right, y2=box.bottom)
    assert result.success, result.summary
    assert sim.phone.state(SETTINGS)["wifi"] is False


@pytest.mark.parametrize(("name", "args", "fragment"), [
    ("click_at", {"x": 5000, "y": 10}, "point (5000, 10) is outside the 1080x2400 screen"),
    ("click_at", {"x": 10, "y": -1}, "is outside the 1080x2400 screen"),
    ("long_press_at", {"x": 1080, "y": 10}, "outside the 1080x2400 screen (x 0-1079, y 0-2399)"),
    ("click_area", {"x1": 0, "y1": 0, "x2": 2000, "y2": 100}, "corner (2000, 100) is outside"),
    ("swipe", {"coordinate": [540, 2000], "coordinate2": [540, 2400]}, "end (540, 2400) is outside"),
    # "bad arguments for tool: field: " and then what pydantic found, in its words (not asserted)
    ("swipe", {"coordinate": [540, 2000, 1], "coordinate2": [540, 200]}, "bad arguments for swipe: coordinate: "),
    ("swipe", {"coordinate": [540, 2000], "coordinate2": [540, 200], "duration": 60},
     "bad arguments for swipe: duration: "),
    ("scroll", {"direction": "sideways"}, "bad arguments for scroll: direction: "),
    ("system_button", {"button": "warp"}, "unknown key 'warp'"),
    ("open_app", {"text": "Calculator"}, "no installed app 'Calculator'; installed: Launcher"),
    ("open_app", {"text": "s"}, "'s' matches several apps"),
    ("click", {"index": 99}, "no control 99 on the current screen"),
    ("click", {"index": 1, "force": True}, "bad arguments for click: force: "),
    ("wait", {"duration": 0}, "bad arguments for wait: duration: "),
    ("complete", {"success": True, "message": "  "}, "bad arguments for complete: message: "),
    ("type_secret", {"secret_id": "pin"}, "unknown tool 'type_secret'"),  # no secrets: no such tool
])
async def test_expected_failures_are_results_and_change_nothing(sim: SimDriver, phone: Harness, name: str,
                                                                args: dict[str, Any], fragment: str) -> None:
    sim.phone.start_app(SETTINGS, "wifi")
    before = (foreground(sim), sim.phone.current_screen(), dict(sim.phone.state(SETTINGS)))
    result = await phone.act(name, **args)
    assert not result.success
    assert fragment in result.summary
    assert result.summary.split(fragment, 1)[1].strip() or not fragment.endswith(": ")
    assert (foreground(sim), sim.phone.current_screen(), dict(sim.phone.state(SETTINGS))) == before


async def test_long_press_and_long_press_at(playground: SimDriver, phone: Harness) -> None:
    await phone.observe()
    button = phone.index("Hold me")
    result = await phone.act("long_press", index=button, text="Hold me")
    assert result.success, result.summary
    assert playground.phone.state("com.example.playground")["held"] is True
    await phone.act("click", index=button)
    assert playground.phone.state("com.example.playground")["held"] is False
    assert phone.ui is not None
    x, y = phone.ui.get_control(button).bounds.center
    assert (await phone.act("long_press_at", x=x, y=y)).success
    assert playground.phone.state("com.example.playground")["held"] is True


async def test_type_into_notes_saves_a_note_verbatim(sim: SimDriver, phone: Harness) -> None:
    sim.phone.start_app(NOTES)
    await phone.observe()
    assert (await phone.act("click", index=phone.index("New note"), text="New note")).success
    await phone.observe()
    title, body = phone.index("title_field"), phone.index("body_field")
    text = "a'b\"c; rm -rf / $(x) `y` %s 你好 🙂"
    result = await phone.act("type", text="draft", index=title)
    assert result.success and result.summary == f"typed 5 characters into [{title}] 'Title' (appended)"
    assert (await phone.act("type", text=text, index=title, clear=True)).success
    assert (await phone.act("type", text="line one\nline two", index=body)).success
    assert (await phone.act("type", text="!")).success  # the focused field: the body
    await phone.observe()
    assert (await phone.act("click", index=phone.index("Save"), text="Save")).success
    assert sim.phone.state(NOTES)["notes"][-1] == {"title": text, "body": "line one\nline two!"}


async def test_open_app_by_label_or_package(sim: SimDriver, phone: Harness) -> None:
    result = await phone.act("open_app", text="  contacts ")
    assert result.success and result.summary == f"opened Contacts ({CONTACTS})"
    assert foreground(sim) == CONTACTS
    assert (await phone.act("open_app", text=NOTES)).success and foreground(sim) == NOTES
    assert (await phone.act("open_app", text="Sett")).success and foreground(sim) == SETTINGS


async def test_system_buttons_back_and_home(sim: SimDriver, phone: Harness) -> None:
    sim.phone.start_app(SETTINGS)
    await phone.observe()
    await phone.act("click", index=phone.index("Wi-Fi"))
    assert sim.phone.current_screen() == "wifi"
    assert (await phone.act("system_button", button="back")).summary == "pressed back"
    assert (foreground(sim), sim.phone.current_screen()) == (SETTINGS, "main")
    assert (await phone.act("system_button", button="KEYCODE_HOME")).summary == "pressed home"
    assert foreground(sim) == LAUNCHER


async def test_scroll_and_swipe_reveal_later_contacts(sim: SimDriver, phone: Harness) -> None:
    sim.phone.start_app(CONTACTS)
    assert "Zoe Martin" not in await phone.texts()
    assert (await phone.act("scroll", direction="down", index=phone.index("contact_list"))).success
    assert (await phone.act("scroll", direction="down")).success
    assert "Zoe Martin" in await phone.texts()
    assert (await phone.act("scroll", direction="up")).success
    assert (await phone.act("scroll", direction="up")).success
    assert "Alice Johnson" in await phone.texts() and "Zoe Martin" not in await phone.texts()
    for _ in range(2):
        result = await phone.act("swipe", coordinate=[540, 2200], coordinate2=[540, 500], duration=0.5)
        assert result.success and result.summary == "swiped from (540, 2200) to (540, 500) in 0.5 s"
    assert "Zoe Martin" in await phone.texts()


async def test_wait_sleeps_through_the_injected_sleep_capped(phone: Harness) -> None:
    assert (await phone.act("wait", duration=2)).summary == "waited 2 s"
    assert (await phone.act("wait", duration=60)).summary == "waited 5 s (capped at 5 s)"
    assert phone.sleeps == [2, 5]


async def test_remember_returns_an_update_and_leaves_the_state_alone(phone: Harness) -> None:
    result = await phone.act("remember", information="  Bob's number is +1 555-0102 ")
    assert result.success and result.state_update == {"memory": "Bob's number is +1 555-0102"}
    assert phone.shared.fast_memory == []  # actions never change the shared state themselves


async def execute_step(call: dict[str, Any], shared: SharedState | None = None) -> tuple[StepContext, Any]:
    """Run one call through the action-execution phase, as the agent does."""
    driver = FakeDriver()
    harness = Harness(driver)
    ui = await harness.observe()
    obs = Observation(ui.observation_id, b"", ui, await driver.current_app(), [], (1080, 2400))
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=shared or SharedState(),
                      observation=obs, action=ActionCall(**call))
    phase = ActionExecution(harness.registry, Phone(driver, credentials=harness.credentials), AgentSettings())
    update = await phase.run(ctx)
    return ctx, update


async def test_remember_reaches_the_shared_state_through_the_phase() -> None:
    shared = SharedState(fast_memory=["older fact"])
    ctx, update = await execute_step({"name": "remember", "args": {"information": "the PIN is on the fridge"}},
                                     shared)
    assert apply_update(ctx.shared, update).fast_memory == ["older fact", "the PIN is on the fridge"]
    assert ctx.status == MobileAgentStatus.CONTINUE


@pytest.mark.parametrize(("success", "status"), [(True, MobileAgentStatus.FINISH), (False, MobileAgentStatus.FAIL)])
async def test_complete_ends_the_step_in_finish_or_fail(success: bool, status: str) -> None:
    ctx, update = await execute_step({"name": "complete", "args": {"success": success, "message": "Wi-Fi is on"}})
    assert (ctx.status, ctx.reason) == (status, "Wi-Fi is on")
    assert ctx.result is not None and ctx.result.success
    assert "answer" not in update  # the run's answer is the FINISH step's reason (BasicAgent.answer)
    assert update["action_outcomes"] == [True]


async def test_every_execution_drops_the_control_cache(sim: SimDriver, phone: Harness) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("click", {"index": 1}), ("click", {"index": 999}), ("fly", {}), ("wait", {"duration": -1}),
        ("remember", {"information": "x"}), ("scroll", {"direction": "down"}),
    ]
    for name, args in calls:
        ctx = await phone.context()
        phone.cache.put(sim.serial, ctx.ui)
        await phone.registry.execute(name, args, ctx)
        assert phone.cache.get(sim.serial) is None, name


@pytest.mark.parametrize(("success", "status"), [(True, "FINISH"), (False, "FAIL")])
async def test_complete_ends_a_run(tmp_path: Path, success: bool, status: str) -> None:
    """CodeAct's code ends the task with complete(); the JSON reply's statuses do it in the other modes."""
    call = f'```python\ncomplete(success={success}, message="no fax app here")\n```'
    settings = Settings(task=TaskSettings(text="send a fax"), model=ModelSettings(script=Path("unused.yaml")),
                        logs=LogSettings(dir=tmp_path), mode="codeact")
    result = await Session(settings, device=FakeDriver(), model=ScriptedModel(Script(replies=[call]))).run()
    assert (result.status, result.reason if not success else result.answer, result.steps) == (
        status, "no fax app here", 1)


async def test_text_typed_into_a_password_field_is_withheld_from_the_recording(tmp_path: Path) -> None:
    from ufo_mobile.core.device.recording import RecordingDriver
    from ufo_mobile.sim.phone.loader import packaged_app

    sim = SimDriver()
    sim.phone.install(packaged_app("com.example.bank"))
    await sim.start_app("com.example.bank", ".LoginActivity")
    recorder = RecordingDriver(sim, tmp_path / "actions.jsonl")
    harness = Harness(recorder)
    await harness.observe()
    result = await harness.act("type", text="4711", index=harness.index("pin_field"))
    assert result.success
    lines = [json.loads(x) for x in (tmp_path / "actions.jsonl").read_text().splitlines()]
    typed = [line for line in lines if line["action"] == "input_text"]
    assert typed and typed[-1]["args"]["text"] is None and typed[-1]["redacted"]
    assert "4711" not in (tmp_path / "actions.jsonl").read_text()


FORM = "com.example.form"


@pytest.mark.parametrize(("label", "fragment"), [
    ("Tell us about you", "[2] 'Tell us about you' (TextView) is not a text field: nothing was typed; the text "
                          "fields on this screen are [3] 'Name', [5] EditText, [7] 'Search', [9] 'City'"),
    ("Submit", "[11] 'Submit' (Button) is not a text field: nothing was typed"),
    ("Address", "[8] 'Address' (LinearLayout) is not a text field; it holds several ([9] 'City', [10] 'Street'): "
                "nothing was typed; give the number of one of them"),
])
async def test_type_at_a_control_that_is_no_text_field_is_refused_and_types_nothing(
        form: SimDriver, phone: Harness, label: str, fragment: str) -> None:
    await phone.observe()
    before = dict(form.phone.state(FORM))
    result = await phone.act("type", text="Ada", index=phone.index(label))
    assert not result.success and fragment in result.summary
    assert form.phone.state(FORM) == before  # the focused field (Name) did not get the text either
    assert form.phone.focused_field() == "name"
    cleared = await phone.act("type", text="Ada", index=phone.index(label), clear=True)
    assert not cleared.success and form.phone.state(FORM) == before


async def test_type_at_a_label_or_a_row_types_into_its_one_field_and_names_it(form: SimDriver, phone: Harness) -> None:
    await phone.observe()
    result = await phone.act("type", text="ada@example.com", index=phone.index("Email address"))
    assert result.success, result.summary
    assert result.summary == ("typed 15 characters into [5] EditText (the text field of [4] 'Email address') "
                              "(appended)")
    result = await phone.act("type", text="maps", index=phone.index("Search bar"))
    assert result.summary == "typed 4 characters into [7] 'Search' (the text field of [6] 'Search bar') (appended)"
    result = await phone.act("type", text="!")
    assert result.summary == "typed 1 characters into [7] 'maps' (the focused field) (appended)"
    state = form.phone.state(FORM)
    assert (state["name"], state["email"], state["query"]) == ("", "ada@example.com", "maps!")
