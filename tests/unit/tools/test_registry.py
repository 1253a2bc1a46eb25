"""The ToolRegistry API (seed 002's), and the agent's registry built from settings."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.fakes import FakeDriver
from tests.unit.tools.conftest import Harness
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.session import Session
from ufo_mobile.core.tools.build import BUILTIN_TOOLS, build_tool_registry, check_tool_settings
from ufo_mobile.core.tools.context import ActionContext, ActionResult, ToolExecutionEvent
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.core.ui.provider import AndroidStateProvider
from ufo_mobile.errors import ConfigError, DeviceCommandError, DeviceDisconnectedError, InvalidActionError
from ufo_mobile.settings import ModelSettings, Settings, TaskSettings, ToolSettings, load_settings

SEEN: list[dict[str, Any]] = []


async def record(ctx: ActionContext, **args: Any) -> ActionResult:
    SEEN.append(args)
    return ActionResult(True, "recorded")


async def search(ctx: ActionContext, query: str, limit: int = 5, exact: bool = False) -> str:
    return f"searched {query!r} limit={limit} exact={exact}"


class SearchArgs(BaseModel):  # extra fields allowed here; the registry forbids them anyway
    query: str
    limit: int = 5
    exact: bool = False


DROIDRUN_PARAMS = {
    "query": {"type": "string", "required": True, "description": "what to look for"},
    "limit": {"type": "integer", "required": False, "default": 5},
    "exact": {"type": "boolean", "required": False, "default": False},
}


async def harness_ctx(driver: FakeDriver | None = None) -> tuple[Harness, ActionContext]:
    harness = Harness(driver or FakeDriver(), registry=ToolRegistry())
    return harness, await harness.context()


@pytest.mark.parametrize("params", [SearchArgs, DROIDRUN_PARAMS, None], ids=["model", "dict", "signature"])
async def test_three_ways_to_declare_parameters_validate_alike(params: Any) -> None:
    harness, ctx = await harness_ctx()
    reg = harness.registry
    reg.register("search", search, params, "Search.")
    assert reg.get_param_types() == {"search": {"query": "string", "limit": "integer", "exact": "boolean"}}
    ok = await reg.execute("search", {"query": "bob", "limit": "7", "exact": "true"}, ctx)
    assert (ok.success, ok.summary) == (True, "searched 'bob' limit=7 exact=True")
    cases: list[tuple[dict[str, Any], str]] = [({}, "query"), ({"query": "x", "colour": 1}, "colour"),
                                               ({"query": "x", "limit": "many"}, "limit")]
    for bad, field in cases:
        result = await reg.execute("search", bad, ctx)
        assert not result.success, bad
        # "bad arguments for search: field: problem": the problem in pydantic's words (not asserted)
        prefix = f"bad arguments for search: {field}: "
        assert result.summary.startswith(prefix) and result.summary.removeprefix(prefix).strip(), result.summary


async def test_register_from_dict_droidrun_format_and_signatures_round_trip() -> None:
    harness, ctx = await harness_ctx()
    reg = harness.registry
    reg.register_from_dict({
        "search": {"function": search, "parameters": DROIDRUN_PARAMS, "description": "Search contacts.",
                   "deps": ["get_apps"]},
        "record": {"function": record, "parameters": {"note": {"type": "string", "required": False}}},
    })
    assert reg.tools["search"].deps == frozenset({"get_apps"}) and reg.tools["record"].deps is None
    signatures = reg.get_signatures()
    assert signatures["search"] == {"description": "Search contacts.", "parameters": {
        "query": {"type": "string", "required": True, "description": "what to look for"},
        "limit": {"type": "integer", "required": False, "default": 5},
        "exact": {"type": "boolean", "required": False, "default": False}}}
    assert signatures["record"]["description"] == "Tool: record"
    again = ToolRegistry()
    again.register_from_dict({name: {"function": reg.tools[name].fn, **spec} for name, spec in signatures.items()})
    assert again.get_param_types() == reg.get_param_types()
    SEEN.clear()
    assert (await reg.execute("record", {}, ctx)).success and SEEN == [{"note": None}]


async def test_signature_derived_parameters_skip_ctx_even_when_its_type_is_for_checkers_only() -> None:
    from tests.unit.tools.custom_tools import count_controls, shout

    harness, ctx = await harness_ctx()
    reg = harness.registry
    reg.register("shout", shout, None, "Shout.")
    reg.register("count", count_controls, None, "Count.")
    assert reg.get_param_types() == {"shout": {"words": "string", "times": "integer"}, "count": {}}
    assert (await reg.execute("shout", {"words": "hi", "times": 2}, ctx)).summary == "shouted 2 time(s)"
    assert harness.driver.calls[-1] == ("input_text", ("HI HI", False))  # type: ignore[attr-defined]
    assert (await reg.execute("count", {}, ctx)).summary == "3 controls"  # a sync function, a pair


def test_registration_refuses_what_cannot_work() -> None:
    reg = ToolRegistry()
    with pytest.raises(TypeError, match="has no parameter for other"):
        reg.register("search", search, {"query": {"type": "string"}, "other": {"type": "string"}}, "x")
    with pytest.raises(TypeError, match="unknown type 'colour'"):
        reg.register("search", search, {"query": {"type": "colour"}}, "x")
    with pytest.raises(TypeError, match="must be letters"):
        reg.register("no spaces", search, None, "x")
    assert reg.names() == []


async def test_execute_turns_what_the_model_gets_wrong_into_failed_results() -> None:
    async def broken(ctx: ActionContext, kind: str) -> ActionResult:
        errors: dict[str, Exception] = {
            "action": InvalidActionError("the list is empty"), "device": DeviceCommandError("no", serial="s"),
            "bug": RuntimeError("a bug"), "gone": DeviceDisconnectedError("gone", serial="s")}
        raise errors[kind]

    harness, ctx = await harness_ctx()
    reg = harness.registry
    reg.register("broken", broken, None, "Breaks.")
    unknown = await reg.execute("fly", {"to": "moon"}, ctx)
    assert (unknown.success, unknown.summary) == (False, "unknown tool 'fly'; available: broken")
    failed = await reg.execute("broken", {"kind": "action"}, ctx)
    assert (failed.success, failed.summary) == (False, "broken failed: the list is empty")
    assert (await reg.execute("broken", {"kind": "device"}, ctx)).summary == "broken failed: [s] no"
    for kind, error in (("bug", RuntimeError), ("gone", DeviceDisconnectedError)):  # not the model's doing
        harness.cache.put(ctx.driver.serial, ctx.ui)
        with pytest.raises(error):
            await reg.execute("broken", {"kind": kind}, ctx)
        assert harness.cache.get(ctx.driver.serial) is None  # dropped all the same


@pytest.mark.parametrize(("returned", "expected"), [
    ("done it", (True, "done it")), ("Failed: no signal", (False, "Failed: no signal")),
    ((False, "nope"), (False, "nope")), (None, (True, "tool done")),
    (ActionResult(True, "x", data={"a": 1}), (True, "x")),
])
async def test_return_values_are_normalised(returned: Any, expected: tuple[bool, str]) -> None:
    harness, ctx = await harness_ctx()
    harness.registry.register("tool", lambda: returned, None, "Sync, without ctx.")
    result = await harness.registry.execute("tool", None, ctx)
    assert (result.success, result.summary) == expected


async def test_an_unknown_return_type_is_a_programming_error() -> None:
    harness, ctx = await harness_ctx()
    harness.registry.register("tool", lambda: {"ok": True}, None, "x")
    with pytest.raises(TypeError, match="returned dict"):
        await harness.registry.execute("tool", {}, ctx)


async def test_workflow_ctx_receives_an_event_per_execution() -> None:
    class Stream:
        events: list[Any] = []

        def write_event_to_stream(self, ev: Any) -> None:
            self.events.append(ev)

    harness, ctx = await harness_ctx()
    harness.registry.register("search", search, None, "Search.")
    stream = Stream()
    await harness.registry.execute("search", {"query": "a"}, ctx, workflow_ctx=stream)
    await harness.registry.execute("nope", {}, ctx, workflow_ctx=stream)
    assert stream.events == [ToolExecutionEvent("search", {"query": "a"}, True, "searched 'a' limit=5 exact=False"),
                             ToolExecutionEvent("nope", {}, False, "unknown tool 'nope'; available: search")]


def test_disable_and_disable_unsupported() -> None:
    reg = ToolRegistry()
    reg.register("tap_it", search, None, "x", deps={"tap"})
    reg.register("tap_and_type", search, None, "x", deps={"tap", "input_text"})
    reg.register("anywhere", search, None, "x")
    reg.disable_unsupported({"tap", "screenshot"})
    assert reg.names() == ["tap_it", "anywhere"]
    reg.disable(["tap_it", "never_registered"])
    assert reg.names() == ["anywhere"]


def builtin_registry(credentials: CredentialManager | None = None, **tools: Any) -> ToolRegistry:
    settings = Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("s.yaml")),
                        tools=ToolSettings(**tools))
    driver = SimDriver()
    return build_tool_registry(settings, driver, AndroidStateProvider(driver), credentials)


def test_descriptions_text_xml_and_per_tool_param_types() -> None:
    reg = builtin_registry()
    assert reg.names() == [name for name in BUILTIN_TOOLS if name != "type_secret"]
    lines = reg.get_tool_descriptions_text().splitlines()
    assert lines[0] == "- click(index: int, text?: str): Tap a control."  # ?: optional, none by default
    assert "- scroll(direction: up|down|left|right, index?: int): " in "\n".join(lines)
    assert "- swipe(coordinate: [int, int], coordinate2: [int, int], duration: number = 1.0)" in "\n".join(lines)
    assert "- type(text: str, index?: int, clear: bool = false): " in "\n".join(lines)
    assert "- system_button(button: back|home|enter|app_switch|call|" in "\n".join(lines)
    shown = reg.get_tool_descriptions_text(exclude={"click", "long_press"})
    assert shown.startswith("- click_at(") and "- click(" not in shown and "- long_press(" not in shown
    root = ET.fromstring(reg.get_tool_descriptions_xml(exclude={"complete"}))
    specs = [json.loads(node.text or "") for node in root.iter("function")]
    assert [s["name"] for s in specs] == [n for n in reg.names() if n != "complete"]
    click = specs[0]["parameters"]
    assert click["required"] == ["index"] and click["additionalProperties"] is False
    assert "title" not in click and click["properties"]["index"]["type"] == "integer"
    types = reg.get_param_types()
    assert types["click"] == {"index": "integer", "text": "string"}
    assert types["open_app"] == {"text": "string"}  # the same name, its own type in each tool
    assert types["swipe"] == {"coordinate": "array", "coordinate2": "array", "duration": "number"}


def test_descriptions_are_xml_safe() -> None:
    reg = ToolRegistry()
    reg.register("odd", search, None, "Closes </function> & opens <functions>.")
    assert "</function> &" not in reg.get_tool_descriptions_xml()
    spec = json.loads(ET.fromstring(reg.get_tool_descriptions_xml()).find("function").text or "")  # type: ignore[union-attr]
    assert spec["description"] == "Closes </function> & opens <functions>."


def test_json_schema_is_an_any_of_of_name_and_args() -> None:
    reg = builtin_registry()
    schema = reg.json_schema(exclude={"wait"})
    names = [option["properties"]["name"]["const"] for option in schema["anyOf"]]
    assert names == [n for n in reg.names() if n != "wait"]
    for option in schema["anyOf"]:
        assert option["required"] == ["name", "args"] and option["additionalProperties"] is False
        assert option["properties"]["args"]["additionalProperties"] is False
    json.dumps(schema)  # plain JSON


def test_capabilities_and_secrets_decide_what_is_offered() -> None:
    assert "type_secret" in builtin_registry(CredentialManager({"bank_pin": "2468"})).names()
    assert "type_secret" not in builtin_registry(CredentialManager()).names()
    reg = builtin_registry(disabled=["click_at", "click_area"])
    assert "click_at" not in reg.names() and "click" in reg.names()

    class NoKeys(FakeDriver):
        supported = frozenset(FakeDriver.supported - {"press_key", "get_apps"})

    settings = Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("s.yaml")))
    names = build_tool_registry(settings, NoKeys(), AndroidStateProvider(NoKeys())).names()
    assert "system_button" not in names and "open_app" not in names and "wait" in names

    class NoIndex(AndroidStateProvider):
        supported = frozenset({"convert_point"})

    names = build_tool_registry(settings, SimDriver(), NoIndex(SimDriver())).names()
    assert "click" not in names and "type" not in names and "click_at" in names and "scroll" in names


def test_an_iphone_is_offered_its_own_keys_and_every_tool_it_can_do() -> None:
    from ufo_mobile.core.device.wda import IOSDriver

    settings = Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("s.yaml")))
    iphone = IOSDriver("http://127.0.0.1:1")  # nothing is asked of it here
    reg = build_tool_registry(settings, iphone, AndroidStateProvider(iphone))
    android = builtin_registry()
    assert reg.names() == android.names()  # it taps, presses, swipes, types and opens apps: every tool
    text = reg.get_tool_descriptions_text()
    assert "- system_button(button: home|enter|del|power|volume_down|volume_up): Press a key: enter submits." in text
    assert "back" not in text.split("- system_button(")[1].split("\n")[0]
    assert reg.check_call("system_button", {"button": "back"}) is not None  # refused with its reason
    assert reg.check_call("system_button", {"button": "KEYCODE_HOME"}) is None


def write_task(folder: Path, tools: str) -> Path:
    (folder / "s.yaml").write_text("replies: [{status: FINISH, result: ok}]\n")
    task = folder / "task.yaml"
    task.write_text(f"task: x\nmodel: {{script: s.yaml}}\nlogs: {{dir: {folder / 'logs'}}}\n{tools}")
    return task


async def test_a_custom_tool_from_a_yaml_dotted_path(tmp_path: Path) -> None:
    task = write_task(tmp_path, "tools:\n  custom:\n    - name: shout\n"
                                "      function: tests.unit.tools.custom_tools:shout\n      deps: [input_text]\n")
    settings = load_settings(task, env={})
    driver = FakeDriver()
    reg = build_tool_registry(settings, driver, AndroidStateProvider(driver))
    assert reg.names()[-1] == "shout" and reg.tools["shout"].deps == frozenset({"input_text"})
    assert "- shout(words: str, times: int = 1): Type the words in capitals into the focused field." \
        in reg.get_tool_descriptions_text()
    harness = Harness(driver, registry=reg)
    assert (await harness.act("shout", words="hey")).success
    assert driver.calls[-1] == ("input_text", ("HEY", False))
    too_many = await harness.act("shout", words="hey", times=9)
    assert (too_many.success, too_many.summary) == (False, "shout failed: no more than 3 times")


@pytest.mark.parametrize(("function", "message"), [
    ("tests.unit.tools.no_such_module:shout",
     "cannot import tests.unit.tools.no_such_module: ModuleNotFoundError: No module named "
     "'tests.unit.tools.no_such_module'"),
    ("tests.unit.tools.custom_tools:whisper", "module tests.unit.tools.custom_tools has no whisper"),
    ("tests.unit.tools.custom_tools:NOT_CALLABLE", "tests.unit.tools.custom_tools:NOT_CALLABLE is not callable"),
    ("tests.unit.tools.custom_tools.shout", "is not 'package.module:function'"),
])
def test_a_custom_tool_that_does_not_load_is_a_one_line_config_error(tmp_path: Path, function: str,
                                                                     message: str) -> None:
    task = write_task(tmp_path, f"tools:\n  custom:\n    - {{name: shout, function: '{function}'}}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(task, env={})
    text = str(caught.value)
    assert text.startswith(f"{task}:6: tools.custom.0.function: ") and message in text
    assert "\n" not in text


async def test_unknown_disabled_tools_are_refused_before_the_run_starts(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^tools.disabled: unknown tool 'clik'; the tools are: click, "):
        check_tool_settings(ToolSettings(disabled=["clik"]))
    check_tool_settings(ToolSettings(disabled=["type_secret", "click"]))  # known names, even if not offered
    settings = load_settings(write_task(tmp_path, "tools: {disabled: [tap]}\n"), env={})
    with pytest.raises(ConfigError, match="unknown tool 'tap'"):
        await Session(settings, device=FakeDriver()).run()
    assert not (tmp_path / "logs").exists()


def test_a_tools_signature_is_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The descriptions go into every step's prompt; the JSON schema behind them is built once per tool."""
    from ufo_mobile.core.tools import params

    made: list[str] = []
    original = params.signature_text

    def counting(model: type[BaseModel]) -> str:
        made.append(model.__name__)
        return original(model)

    monkeypatch.setattr(params, "signature_text", counting)
    reg = ToolRegistry()
    reg.register("record", record, {"text": {"type": "string", "required": True}}, "Remember a text.")
    first = reg.get_tool_descriptions_text()
    assert reg.get_tool_descriptions_text() == first == "- record(text: str): Remember a text."
    assert len(made) == 1
    reg.register("record", record, {"note": {"type": "string", "required": True}}, "Remember a note.")
    assert reg.get_tool_descriptions_text() == "- record(note: str): Remember a note."  # a new tool, a new one
