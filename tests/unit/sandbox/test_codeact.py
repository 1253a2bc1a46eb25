"""CodeAct runs in a real sandbox process: tool bridge, stop, limits, refusals at both walls."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from ufo_mobile.core.sandbox import CodeRun, SandboxLimits, Stop, ToolCall, ToolError, run_codeact
from ufo_mobile.core.sandbox import run as run_module

LIMITS = SandboxLimits(wall_seconds=60)  # generous: these tests are not about time
TOOLS = ["click", "type", "complete"]
HANG_GUARD = 120


class FakePhone:
    """A ToolCaller: records calls; ``click(99)`` fails, ``complete`` stops the code."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[Any], dict[str, Any]]] = []

    async def __call__(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        self.calls.append((name, args, kwargs))
        if name == "complete":
            return Stop({"success": args[0]})
        if name == "click" and args == [99]:
            raise ToolError("no control with id 99 on this screen")
        return {"tool": name, "args": args, "kwargs": kwargs}


async def run(code: str, limits: SandboxLimits = LIMITS, phone: Any = None) -> CodeRun:
    async with asyncio.timeout(HANG_GUARD):
        return await run_codeact(code, TOOLS, phone or FakePhone(), limits)


async def test_tool_calls_are_bridged_in_order_and_the_code_sees_results_and_errors() -> None:
    phone = FakePhone()
    result = await run(
        "first = click(5)\n"
        "print('first', first['args'])\n"
        "try:\n"
        "    click(99)\n"
        "except Exception as e:\n"
        "    print('failed:', e)\n"
        "type('hi', 3, clear=True)\n",
        phone=phone)
    assert result.ok, result
    assert result.output == "first [5]\nfailed: no control with id 99 on this screen\n"
    assert phone.calls == [("click", [5], {}), ("click", [99], {}), ("type", ["hi", 3], {"clear": True})]
    assert result.calls == (
        ToolCall("click", (5,), {}, result={"tool": "click", "args": [5], "kwargs": {}}),
        ToolCall("click", (99,), {}, error="no control with id 99 on this screen"),
        ToolCall("type", ("hi", 3), {"clear": True}, result={"tool": "type", "args": ["hi", 3],
                                                           "kwargs": {"clear": True}}),
    )


async def test_an_uncaught_tool_error_is_the_run_error_with_its_line() -> None:
    result = await run("click(1)\nclick(99)\nclick(2)\n")
    assert result.error == "ToolError: no control with id 99 on this screen (line 2)"
    assert not result.ok and len(result.calls) == 2


async def test_complete_stops_the_code_even_inside_except_exception() -> None:
    phone = FakePhone()
    result = await run("print('before')\ntry:\n    complete(True, 'done')\nexcept Exception:\n    print('caught')\n"
                       "print('after')\nclick(1)\n", phone=phone)
    assert result.ok and result.stopped
    assert result.output == "before\n"
    assert [name for name, _, _ in phone.calls] == ["complete"]
    assert result.calls[-1] == ToolCall("complete", (True, "done"), {}, result={"success": True}, stopped=True)


async def test_calls_after_a_stop_end_the_run_without_reaching_the_tools() -> None:
    phone = FakePhone()
    result = await run("try:\n    complete(True, 'x')\nfinally:\n    click(1)\n", phone=phone)
    assert result.ok and result.stopped
    assert [name for name, _, _ in phone.calls] == ["complete"]


async def test_the_tool_call_limit_ends_the_run() -> None:
    phone = FakePhone()
    result = await run("while True:\n    click(1)\n", SandboxLimits(wall_seconds=60, max_tool_calls=3), phone)
    assert result.error == "too many tool calls: the limit is 3"
    assert len(phone.calls) == 3 and len(result.calls) == 3


async def test_arguments_that_are_not_json_are_a_type_error_in_the_code() -> None:
    result = await run("try:\n    click(print)\nexcept TypeError as e:\n    print(e)\n")
    assert result.ok
    assert result.output.startswith("the arguments of click() must be JSON values")
    assert result.calls == ()


async def test_a_tool_that_hangs_is_an_error_the_code_sees() -> None:
    never = asyncio.Event()

    async def hanging(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        await never.wait()

    result = await run("try:\n    click(1)\nexcept ToolError as e:\n    print(e)\n",
                       SandboxLimits(wall_seconds=60, tool_seconds=0.2), hanging)
    assert result.ok
    assert result.output == "click() took longer than 0.2 s\n"


async def test_a_bug_in_the_tool_caller_propagates_and_the_process_is_still_killed() -> None:
    async def broken(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        raise RuntimeError("caller bug")

    with pytest.raises(RuntimeError, match="caller bug"):
        await run("click(1)\nwhile True:\n    pass\n", phone=broken)


async def test_a_timeout_error_of_the_caller_itself_is_a_bug_not_a_wall_clock_timeout() -> None:
    async def timing_out(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        raise TimeoutError("the caller's own timeout")

    with pytest.raises(TimeoutError, match="the caller's own timeout"):
        await run("click(1)\n", phone=timing_out)


async def test_a_result_that_is_not_json_is_a_caller_bug() -> None:
    async def unserialisable(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return object()

    with pytest.raises(TypeError, match="not a JSON value"):
        await run("click(1)\n", phone=unserialisable)


async def test_an_endless_loop_is_stopped_by_the_wall_clock_limit() -> None:
    result = await run("while True:\n    pass\n", SandboxLimits(wall_seconds=1))
    assert result.timed_out and not result.ok
    assert result.error == "the code ran longer than the wall-clock limit of 1 s"


async def test_an_endless_loop_of_tool_calls_is_stopped_too() -> None:
    result = await run("while True:\n    print(len([1]))\n", SandboxLimits(wall_seconds=1))
    assert result.timed_out
    assert len(result.output) < LIMITS.max_output_chars + 100


@pytest.mark.parametrize("code", [
    "s = 'a' * (1024 * 1024 * 1024)\n",
    "items = []\nwhile True:\n    items.append('x' * 1000000)\n",
])
async def test_a_memory_bomb_is_stopped_by_the_memory_limit(code: str) -> None:
    result = await run(code, SandboxLimits(wall_seconds=60, memory_mb=128))
    assert result.error == "MemoryError: the memory limit of 128 MiB was reached"


async def test_a_flood_of_prints_is_cut_to_the_output_limit() -> None:
    result = await run("for i in range(100000):\n    print(i)\n", SandboxLimits(wall_seconds=60, max_output_chars=1000))
    assert result.ok
    match = re.fullmatch(r"(.*)\n… \[(\d+) bytes left out\] …\n(.*)", result.output, re.S)
    assert match is not None, result.output[:200]
    head, left_out, tail = match.groups()
    assert head.startswith("0\n1\n2\n") and len(head) == 500
    assert tail.endswith("99998\n99999\n") and len(tail) == 500
    assert int(left_out) == len("".join(f"{i}\n" for i in range(100000))) - 1000


@pytest.mark.parametrize(("code", "error"), [
    ("os.getcwd()", "NameError: name 'os' is not defined (line 1)"),
    ("x = 1\nhasattr(x, 'real')", "NameError: name 'hasattr' is not defined (line 2)"),
    ("def f(n):\n    return 1 / n\nf(0)", "ZeroDivisionError: division by zero (line 2)"),
])
async def test_errors_of_the_code_are_one_line_with_the_line_number(code: str, error: str) -> None:
    result = await run(code)
    assert result.error == error


async def test_refused_code_starts_no_process(sandbox_processes: list[Any]) -> None:
    result = await run("import os\nos.system('id')\n")
    assert result.refused == "line 1: imports are not allowed"
    assert not result.ok and sandbox_processes == []
    assert result.render() == "Refused: line 1: imports are not allowed"


async def test_the_child_checks_the_code_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_module, "check_code", lambda *args, **kwargs: None)
    result = await run("import os\n")
    assert result.error == "refused: line 1: imports are not allowed"


async def test_the_safe_builtins_work_and_the_others_are_missing() -> None:
    result = await run("print(len('abc'), sum(range(4)), sorted({3, 1}), repr(None), isinstance(1, int))\n"
                       "for probe in [lambda: exit, lambda: iter, lambda: callable, lambda: license]:\n"
                       "    try:\n"
                       "        probe()\n"
                       "    except NameError as e:\n"
                       "        print(e)\n")
    assert result.output == ("3 6 [1, 3] None True\nname 'exit' is not defined\nname 'iter' is not defined\n"
                             "name 'callable' is not defined\nname 'license' is not defined\n")


async def test_bad_tool_names_are_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="not a usable tool name"):
        await run_codeact("x = 1", ["__import__"], FakePhone(), LIMITS)


def test_render_shows_output_and_error() -> None:
    run_record = CodeRun(error="NameError: name 'x' is not defined (line 1)", output="hi\n")
    assert run_record.render() == "Output:\nhi\n\nError: NameError: name 'x' is not defined (line 1)"
