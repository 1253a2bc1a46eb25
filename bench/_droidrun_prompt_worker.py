"""DroidRun's text-only step for ``bench/prompt.py``; runs inside the throwaway full DroidRun venv
(``pip install mobilerun==0.7.4`` with its dependencies), never in ours.

What one call of DroidRun's FastAgent (``mobilerun/agent/fast_agent/fast_agent.py``) sends with
XML tool calling (``native_tools`` False) and vision off, rendered with DroidRun's own code:

- the system prompt: ``PromptLoader.load_prompt`` of the configured ``fast_agent`` system template
  with the context ``_build_system_prompt`` gives it, the tool list from
  ``ToolRegistry.get_tool_descriptions_xml`` of the registry ``build_tool_registry`` builds for an
  Android device, less the tools the ADB driver and the Android state provider cannot serve
  (``disable_unsupported``) and the tools disabled by default (``DEFAULT_DISABLED_TOOLS``);
- the user message: the ``fast_agent`` user template with the goal;
- the device state: ``AndroidStateProvider._state_from_data`` (its ``DetailedFilter`` and
  ``IndexedFormatter``) on what its ADB driver's uiautomator path (``_get_ui_tree_adb``) makes of
  the dump;
- the history of a later step: per earlier turn an assistant message (the thought, then the call
  written by ``format_tool_calls``) and a user message (``format_tool_results``); then
  ``limit_history`` and the injection of the device state into the last user message and of the
  previous device state into the one before, as ``handle_llm_input`` does (that injection is
  inline in ``handle_llm_input``, so it is restated here, in the same order).

Reads ``{"runs": [{"goal": str, "steps": [{"dump": xml, "turns": [{"thought", "calls": [{"tool",
"args"}], "results": [str]}, ...]}]}]}`` from stdin and prints one JSON line per step: ``{"run", "step", "system",
"history", "user"}`` (texts; the bench counts their tokens) or ``{"run", "step", "error"}``.
``--check`` prints the installed versions and exits.
"""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from importlib.metadata import version
from typing import Any


class FakeShell:
    """The device under DroidRun's ADB driver: ``uiautomator dump`` answers with the given dump."""

    def __init__(self) -> None:
        self.dump = ""

    async def shell(self, command: str) -> str:
        return self.dump


class FastAgentStep:
    """DroidRun's pieces for one FastAgent call, built once."""

    def __init__(self) -> None:
        from mobilerun.agent.utils.signatures import build_tool_registry
        from mobilerun.config_manager.config_manager import DEFAULT_DISABLED_TOOLS, AgentConfig
        from mobilerun.tools.filters.detailed_filter import DetailedFilter
        from mobilerun.tools.formatters.indexed_formatter import IndexedFormatter
        from mobilerun.tools.ui.provider import AndroidStateProvider
        from mobilerun_core_local.driver.android.adb import AndroidDriver

        self.config = AgentConfig()
        self.driver = AndroidDriver()
        self.shell = FakeShell()
        self.driver.device = self.shell  # type: ignore[assignment]
        self.provider = AndroidStateProvider(self.driver, tree_filter=DetailedFilter(),
                                             tree_formatter=IndexedFormatter())
        registry, _ = asyncio.run(build_tool_registry(supported_buttons=AndroidDriver.supported_buttons,
                                                      platform="android"))
        registry.disable_unsupported(set(AndroidDriver.supported) | set(self.provider.supported))
        registry.disable(list(DEFAULT_DISABLED_TOOLS))
        self.registry = registry

    async def system(self) -> str:
        from mobilerun.config_manager.prompt_loader import PromptLoader

        context = {
            "tool_descriptions": self.registry.get_tool_descriptions_xml(),
            "available_secrets": [],
            "available_tools": set(self.registry.tools.keys()),
            "variables": {},
            "output_schema": None,
            "parallel_tools": self.config.fast_agent.parallel_tools,
            "native_tools": False,
            "vision": False,
            "platform": "Android",
            "screenshot_only": False,
        }
        return await PromptLoader.load_prompt(self.config.get_fast_agent_system_prompt_path(), context)

    async def user(self, goal: str) -> str:
        from mobilerun.config_manager.prompt_loader import PromptLoader

        return await PromptLoader.load_prompt(self.config.get_fast_agent_user_prompt_path(),
                                              {"goal": goal, "variables": {}})

    async def device_state(self, dump: str) -> str:
        self.shell.dump = dump
        combined = await self.driver._get_ui_tree_adb()
        return str(self.provider._state_from_data(combined).formatted_text)


def history(turns: list[dict[str, Any]]) -> list[Any]:
    """The assistant and tool-result messages of the earlier turns, as FastAgent stores them."""
    from llama_index.core.base.llms.types import ChatMessage
    from mobilerun.agent.fast_agent.xml_parser import ToolCall, ToolResult, format_tool_calls, format_tool_results

    messages = []
    for turn in turns:
        calls = [ToolCall(name=call["tool"], parameters=dict(call["args"])) for call in turn["calls"]]
        text = f"{turn['thought']}\n\n{format_tool_calls(calls)}" if calls else turn["thought"]
        messages.append(ChatMessage(role="assistant", content=text))
        outputs = turn["results"] or [""]
        results = [ToolResult(name=call.name, output=outputs[min(i, len(outputs) - 1)], is_error=False)
                   for i, call in enumerate(calls)]
        messages.append(ChatMessage(role="user", content=format_tool_results(results)))
    return messages


def assemble(system: str, goal_message: str, turns: list[dict[str, Any]], state: str, previous: str) -> list[Any]:
    """The messages of one call, in the order and form of ``FastAgent.handle_llm_input``."""
    from llama_index.core.base.llms.types import ChatMessage, TextBlock
    from mobilerun.agent.common.constants import LLM_HISTORY_LIMIT
    from mobilerun.agent.utils.chat_utils import limit_history

    stored = [ChatMessage(role="user", content=goal_message), *history(turns)]
    limited = limit_history(stored, LLM_HISTORY_LIMIT * 2, preserve_first=True)
    messages = [ChatMessage(role="system", content=system), *copy.deepcopy(limited)]
    users = [i for i, message in enumerate(messages) if message.role == "user"]
    if state.strip():
        messages[users[-1]].blocks.append(TextBlock(text=f"\n<device_state>\n{state.strip()}\n</device_state>\n"))
    if len(users) >= 2 and previous.strip():
        messages[users[-2]].blocks.append(
            TextBlock(text=f"\n<previous_device_state>\n{previous.strip()}\n</previous_device_state>\n"))
    return messages


async def render_run(step: FastAgentStep, run_index: int, run: dict[str, Any]) -> None:
    system = await step.system()
    goal_message = await step.user(run["goal"])
    previous = ""
    for index, item in enumerate(run["steps"], 1):
        try:
            state = await step.device_state(item["dump"])
            messages = assemble(system, goal_message, item.get("turns", []), state, previous)
            previous = state
            out = {"run": run_index, "step": index, "system": messages[0].content or "",
                   "history": [m.content or "" for m in messages[1:-1]], "user": messages[-1].content or ""}
        except Exception as exc:  # report DroidRun's failure on this step and go on
            out = {"run": run_index, "step": index, "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(out, ensure_ascii=False), flush=True)


def main(argv: list[str]) -> int:
    if "--check" in argv:
        FastAgentStep()
        print(json.dumps({name: version(name) for name in ("mobilerun", "mobilerun-core-local", "llama-index-core")}))
        return 0
    job = json.load(sys.stdin)
    step = FastAgentStep()
    for run_index, run in enumerate(job["runs"]):
        asyncio.run(render_run(step, run_index, run))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
