"""The static check of CodeAct code: what the model's Python may contain, decided on its syntax tree.

CodeAct code calls the tools (``click(5)``, ``type("hi", 3)``, ``complete(True, "done")``) with a
little arithmetic, loops and string handling around them. Anything beyond that is refused before a
process is started, with one line the model reads and can act on: ``line 1: imports are not allowed``.

Refused:

- ``import`` and ``from ... import``;
- every name, attribute, parameter or definition starting with ``_`` (``__import__``, ``__class__``,
  ``__subclasses__``, ``__globals__``, ``__builtins__``, ...); a lone ``_`` is allowed as a name (the
  throwaway loop variable);
- attributes that reach frames, code or the type graph without an underscore (``gi_frame``,
  ``f_globals``, ``tb_next``, ``co_code``, ``mro``) and ``str.format`` (its fields read attributes);
- calls of ``open``, ``exec``, ``eval``, ``getattr`` and the rest of ``FORBIDDEN_CALLS``, unless a tool
  has that name (the ``type`` tool is a call of ``type``);
- ``global``, ``nonlocal``, ``class``, a bare ``except:`` (the runtime ends the code with an exception
  that only a bare ``except`` would catch), and every ``async`` construct;
- code longer than the size limit, code with a NUL character, code nested too deeply to parse.

The check is the first of two walls, not the only one: the code also runs in a separate process with
a clean environment and resource limits, where only ``SAFE_BUILTINS``, ``SAFE_EXCEPTIONS`` and the
tool stubs are defined. This module uses nothing but the standard library because the sandbox
process runs it again from its source text (see ``process.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator

MAX_CODE_CHARS = 20_000
"""The default size limit of model-written code, in characters."""

SAFE_BUILTINS: tuple[str, ...] = (
    "abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "isinstance", "len", "list", "max",
    "min", "print", "range", "repr", "reversed", "round", "set", "sorted", "str", "sum", "tuple", "zip",
)
"""The builtin functions and types CodeAct code may use (True, False and None are keywords)."""

SAFE_EXCEPTIONS: tuple[str, ...] = (
    "ArithmeticError", "AssertionError", "Exception", "IndexError", "KeyError", "LookupError", "NameError",
    "RuntimeError", "TypeError", "ValueError", "ZeroDivisionError",
)
"""The exception classes CodeAct code may raise and catch (besides ``ToolError``, a failed tool call)."""

FORBIDDEN_CALLS = frozenset({
    "breakpoint", "compile", "delattr", "dir", "eval", "exec", "getattr", "globals", "help", "input", "locals",
    "memoryview", "object", "open", "setattr", "super", "type", "vars",
})
"""Builtins that open files, run code or inspect objects; calling one is refused even though none of
them exists in the sandbox, so that the model reads why."""

_FRAME_PREFIXES = ("gi_", "cr_", "ag_", "f_", "tb_", "co_")
_FORBIDDEN_ATTRIBUTES = frozenset({"mro", "format", "format_map"})

_STATEMENTS: dict[type[ast.AST], str] = {
    ast.Import: "imports are not allowed",
    ast.ImportFrom: "imports are not allowed",
    ast.Global: "'global' is not allowed",
    ast.Nonlocal: "'nonlocal' is not allowed",
    ast.ClassDef: "class definitions are not allowed",
    ast.AsyncFunctionDef: "async code is not allowed",
    ast.AsyncFor: "async code is not allowed",
    ast.AsyncWith: "async code is not allowed",
    ast.Await: "async code is not allowed",
}


def too_long(code: str, max_chars: int) -> str | None:
    """The refusal for code over ``max_chars`` characters, or None."""
    if len(code) > max_chars:
        return f"the code has {len(code)} characters; the limit is {max_chars}"
    return None


def check_code(code: str, *, tools: Collection[str] = (), max_chars: int = MAX_CODE_CHARS) -> str | None:
    """Why ``code`` may not run, in one line (``line N: ...``), or None when it may.

    ``tools`` are the names of the tool functions the code may call; a tool may shadow a forbidden
    builtin (the ``type`` tool).
    """
    reason = too_long(code, max_chars)
    if reason is not None:
        return reason
    if "\x00" in code:
        return "the code contains a NUL character"
    try:
        tree = ast.parse(code, "<code>")
    except SyntaxError as exc:
        return f"line {exc.lineno or 1}: syntax error: {exc.msg}"
    except (RecursionError, MemoryError):
        return "the code is nested too deeply"
    forbidden = FORBIDDEN_CALLS.difference(tools)
    found = [(_position(node), reason) for node in ast.walk(tree) for reason in _problems(node, forbidden)]
    if not found:
        return None
    position, reason = min(found, key=lambda item: item[0])
    return f"line {position[0]}: {reason}"


def _position(node: ast.AST) -> tuple[int, int, int, int]:
    """Where a node starts and ends: the first problem in reading order, the innermost on a tie."""
    line, column = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
    return line, column, getattr(node, "end_lineno", None) or line, getattr(node, "end_col_offset", None) or column


def _problems(node: ast.AST, forbidden: frozenset[str]) -> Iterator[str]:
    """What is wrong with one node (not its children)."""
    statement = _STATEMENTS.get(type(node))
    if statement is not None:
        yield statement
    if isinstance(node, ast.comprehension) and node.is_async:
        yield "async code is not allowed"
    if isinstance(node, ast.ExceptHandler) and node.type is None:
        yield "a bare 'except:' is not allowed; write 'except Exception:'"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in forbidden:
        yield f"'{node.func.id}()' is not allowed"
    if isinstance(node, ast.Attribute):
        yield from _attribute_problems(node.attr)
    if isinstance(node, ast.MatchClass):  # `case str(format=f)` reads an attribute by another name
        for attr in node.kwd_attrs:
            yield from _attribute_problems(attr)
            if attr.startswith("_"):
                yield f"the attribute '.{attr}' is not allowed"
    for name in _identifiers(node):
        if name.startswith("_") and not (name == "_" and isinstance(node, ast.Name)):
            yield f"the name '{name}' is not allowed (names starting with '_' are reserved)"


def _attribute_problems(attr: str) -> Iterator[str]:
    if attr in ("format", "format_map"):
        yield f"'.{attr}()' is not allowed; use an f-string"
    elif attr in _FORBIDDEN_ATTRIBUTES or attr.startswith(_FRAME_PREFIXES):
        yield f"the attribute '.{attr}' is not allowed"


def _identifiers(node: ast.AST) -> Iterator[str]:
    """Every identifier the node itself introduces or reads."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.keyword) and node.arg is not None:
        yield node.arg
    elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name is not None:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest is not None:
        yield node.rest
    elif isinstance(node, ast.MatchClass):
        yield from node.kwd_attrs
    elif isinstance(node, ast.alias):
        yield node.name
