from __future__ import annotations

import pytest

from ufo_mobile.core.sandbox import check_code

TOOLS = ("click", "type", "complete")


@pytest.mark.parametrize(("code", "reason"), [
    ("import os", "line 1: imports are not allowed"),
    ("from os import path", "line 1: imports are not allowed"),
    ('x = 1\nopen("/etc/passwd")', "line 2: 'open()' is not allowed"),
    ('__import__("os")', "line 1: the name '__import__' is not allowed (names starting with '_' are reserved)"),
    ("().__class__.__bases__[0].__subclasses__()",
     "line 1: the name '__class__' is not allowed (names starting with '_' are reserved)"),
    ('getattr(x, "y")', "line 1: 'getattr()' is not allowed"),
    ('exec("1")', "line 1: 'exec()' is not allowed"),
    ('eval("1")', "line 1: 'eval()' is not allowed"),
    ("def f():\n    global g\n", "line 2: 'global' is not allowed"),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n", "line 4: 'nonlocal' is not allowed"),
    ("async def f():\n    pass\n", "line 1: async code is not allowed"),
    ("class C:\n    pass\n", "line 1: class definitions are not allowed"),
    ("try:\n    click(1)\nexcept:\n    pass\n", "line 3: a bare 'except:' is not allowed; write 'except Exception:'"),
    ("g = (i for i in range(3))\ng.gi_frame.f_back", "line 2: the attribute '.gi_frame' is not allowed"),
    ('"{0}".format(x)', "line 1: '.format()' is not allowed; use an f-string"),
    # a class pattern reads attributes by keyword: str.format, which reads the child's globals, is caught
    ("match 'x':\n    case str(format=f):\n        f('{0.gi_frame}')", "line 2: '.format()' is not allowed; use an "
                                                                       "f-string"),
    ("match g:\n    case object(gi_frame=fr):\n        pass", "line 2: the attribute '.gi_frame' is not allowed"),
    ("def f(_secret):\n    pass\n", "line 1: the name '_secret' is not allowed (names starting with '_' are reserved)"),
    ("click(1)\nclick(2\n", "line 2: syntax error: '(' was never closed"),
    ("x = 1\x00", "the code contains a NUL character"),
    ("x = " + "-" * 100_000 + "1", "the code is nested too deeply"),
])
def test_refusals_name_the_line_and_the_reason(code: str, reason: str) -> None:
    assert check_code(code, tools=TOOLS, max_chars=1_000_000) == reason


def test_the_first_problem_in_the_code_is_reported() -> None:
    assert check_code("x = 1\nexec('2')\nimport os\n", tools=TOOLS) == "line 2: 'exec()' is not allowed"


def test_code_over_the_size_limit_is_refused() -> None:
    assert check_code("x = 1\n" * 10, max_chars=20) == "the code has 60 characters; the limit is 20"


@pytest.mark.parametrize("code", [
    'type("hi", 3)',  # a tool may shadow a forbidden builtin
    "for _ in range(3):\n    click(1)",
    "items = [x * 2 for x in range(5) if x]\nprint(f'{items!r:>20}')",
    "def tap(i):\n    return click(i)\ntap(3)",
    "try:\n    click(99)\nexcept Exception as e:\n    print(e)",
    "done = complete(True, 'ok') if len([1]) else None",
])
def test_ordinary_tool_code_passes(code: str) -> None:
    assert check_code(code, tools=TOOLS) is None


def test_type_is_refused_when_it_is_not_a_tool() -> None:
    assert check_code("type(1)", tools=("click",)) == "line 1: 'type()' is not allowed"
