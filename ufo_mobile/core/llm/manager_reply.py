"""The manager's reply: a thought, facts to keep, and either a plan or the final answer.

A reply looks like::

    <thought>Settings is open; Wi-Fi is the second row.</thought>
    <add_memory>The network is called HomeNet.</add_memory>
    <plan>
    1. Tap Wi-Fi
    2. TEXT_TASK: replace the network name with "Office"
    3. <script>
    import urllib.request
    print(urllib.request.urlopen("https://example.com").status)
    </script>
    </plan>

or, in place of the plan, ``<request_accomplished success="true">the answer</request_accomplished>``,
or ``<ask_user>a question for the user</ask_user>`` when only the user can say how to go on.

Parsing is strict where a slip would change what the agent does: exactly one plan or one final tag,
a ``success`` of true or false, every tag known and closed, no tag opened inside another. It is
lenient where nothing depends on it: prose and code fences around the tags are ignored, and several
thoughts are joined. Every error is one line saying what to fix, ready for the corrective re-ask.
The scan is linear in the reply: each tag's end is found by one forward search, and no pattern
can backtrack over more than the text between two ``<``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ufo_mobile.errors import LLMOutputParseError
from ufo_mobile.safe_text import printable

SubgoalKind = Literal["action", "script", "text_task"]

_TOP = ("thought", "add_memory", "plan", "request_accomplished", "ask_user")
# A tag: name, then optional attributes that must start with whitespace (so the name and the
# attributes cannot trade characters while backtracking), then an optional "/" and ">".
_TAG = re.compile(r"<(/?)([A-Za-z_][\w-]*)((?:\s[^<>]*)?)(/?)>")
_CLOSE = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in (*_TOP, "script")}
_OPENED_INSIDE = re.compile(r"<(thought|add_memory|plan|request_accomplished|ask_user)(?=[\s/>])", re.IGNORECASE)
_SCRIPT_TAG = re.compile(r"<(/?)script((?:\s[^<>]*)?)(/?)>", re.IGNORECASE)
_ATTR = re.compile(r"""\s*([A-Za-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""")
_MARKER = re.compile(r"^(?:\d{1,4}[.)]|[-*•])(?:\s+|$)")
_TEXT_TASK = re.compile(r"^TEXT_TASK\s*:", re.IGNORECASE)
_FORMAT = ('use only <thought>, <add_memory>, <plan>, <request_accomplished success="true|false"> '
           "and <ask_user>")


class ManagerReplyError(LLMOutputParseError, ValueError):
    """The manager's reply breaks the format; ``str()`` is one line telling the model what to fix."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Subgoal(_Frozen):
    """One plan item: an on-screen ``action``, an off-device ``script``, or a ``text_task`` on the
    focused field. ``text`` is the item without its marker, prefix or tags."""

    kind: SubgoalKind
    text: str = Field(min_length=1)

    def render(self) -> str:
        """The item as the manager wrote it (for the previous plan in the next prompt)."""
        if self.kind == "script":
            return f"<script>\n{self.text}\n</script>"
        if self.kind == "text_task":
            return f"TEXT_TASK: {self.text}"
        return self.text


class Final(_Frozen):
    """The end of the task: whether it succeeded, and the answer (or the reason it failed)."""

    success: bool
    answer: str = Field(min_length=1)


class ManagerReply(_Frozen):
    """A parsed manager reply: exactly one of ``plan`` (non-empty), ``final`` and ``question`` is set."""

    thought: str = ""
    memory: list[str] = Field(default_factory=list)
    plan: list[Subgoal] | None = None
    final: Final | None = None
    question: str | None = None

    @model_validator(mode="after")
    def _one_outcome(self) -> ManagerReply:
        if sum(x is not None for x in (self.plan, self.final, self.question)) != 1:
            raise ValueError("a manager reply has exactly one of 'plan', 'final' and 'question'")
        if self.plan is not None and not self.plan:
            raise ValueError("a plan needs at least one subgoal")
        return self

    @property
    def current_subgoal(self) -> Subgoal | None:
        """The first item of the plan: what the executor (or a sub-agent) does next."""
        return self.plan[0] if self.plan else None


def render_plan(plan: Iterable[Subgoal]) -> str:
    """The plan as numbered lines, scripts included, in the form the manager writes it."""
    return "\n".join(f"{n}. {item.render()}" for n, item in enumerate(plan, start=1))


@dataclass
class _Tags:
    thoughts: list[str] = field(default_factory=list)
    memory: list[str] = field(default_factory=list)
    plans: list[str] = field(default_factory=list)
    finals: list[tuple[str, str]] = field(default_factory=list)  # (attributes, body)
    questions: list[str] = field(default_factory=list)


def _error(message: str, raw: str) -> ManagerReplyError:
    return ManagerReplyError(printable(message, 400), raw=raw)


def _shown(text: str) -> str:
    return printable(text.strip(), 60)


def _split_tags(text: str) -> _Tags:
    """The bodies of the top-level tags, in order; prose between them is skipped."""
    tags = _Tags()
    pos = 0
    while (match := _TAG.search(text, pos)) is not None:
        closing, name, attrs = match.group(1), match.group(2).lower(), match.group(3)
        if name == "script":
            raise _error("<script> belongs inside <plan>, as one of its items", text)
        if name not in _TOP:
            raise _error(f"unknown tag <{closing}{_shown(name)}>: {_FORMAT}", text)
        if closing:
            raise _error(f"</{name}> closes a tag that was never opened: open it with <{name}>", text)
        if match.group(4) or attrs.rstrip().endswith("/"):
            raise _error(f"<{name}/> has no content: write <{name}>...</{name}>", text)
        if attrs.strip() and name != "request_accomplished":
            raise _error(f"<{name}> takes no attributes: write a plain <{name}>", text)
        end = _CLOSE[name].search(text, match.end())
        if end is None:
            raise _error(f"<{name}> is never closed: end it with </{name}>", text)
        body = text[match.end() : end.start()]
        inner = _OPENED_INSIDE.search(body)
        if inner is not None:
            raise _error(f"<{inner.group(1).lower()}> is opened inside <{name}>: close </{name}> first; "
                         "tags do not nest", text)
        if name == "thought":
            tags.thoughts.append(body.strip())
        elif name == "add_memory":
            tags.memory.extend(_items(body))
        elif name == "plan":
            tags.plans.append(body)
        elif name == "ask_user":
            tags.questions.append(body.strip())
        else:
            tags.finals.append((attrs, body))
        pos = end.end()
    return tags


def _strip_marker(line: str) -> str:
    return _MARKER.sub("", line.strip(), count=1).strip()


def _items(body: str) -> list[str]:
    """One item per non-empty line, list markers removed."""
    return [item for item in (_strip_marker(line) for line in body.splitlines()) if item]


def _line_items(lines: Iterable[str], items: list[Subgoal], raw: str) -> None:
    """Append the action and ``TEXT_TASK:`` items of plain plan lines to ``items``."""
    for line in lines:
        item = _strip_marker(line)
        if not item:
            continue
        prefix = _TEXT_TASK.match(item)
        if prefix is None:
            items.append(Subgoal(kind="action", text=item))
            continue
        instruction = item[prefix.end() :].strip()
        if not instruction:
            raise _error(f"plan item {len(items) + 1}: TEXT_TASK: needs the instruction after it, "
                         "e.g. TEXT_TASK: replace the greeting with 'Hi all'", raw)
        items.append(Subgoal(kind="text_task", text=instruction))


def _parse_plan(body: str, raw: str) -> list[Subgoal]:
    """The plan's items: one per line, a ``<script>...</script>`` block being one item."""
    items: list[Subgoal] = []
    pos = 0
    while (match := _SCRIPT_TAG.search(body, pos)) is not None:
        if match.group(1):
            raise _error("</script> closes a script that was never opened: start it with <script>", raw)
        if match.group(2).strip() or match.group(3):
            raise _error("<script> takes no attributes: write <script>code or instructions</script>", raw)
        *lines, lead = body[pos : match.start()].split("\n")
        _line_items(lines, items, raw)
        number = len(items) + 1
        if _strip_marker(lead):
            raise _error(f"plan item {number}: put <script> at the start of its own item, "
                         f"not after {_shown(lead)!r}", raw)
        end = _CLOSE["script"].search(body, match.end())
        if end is None:
            raise _error(f"plan item {number}: <script> is never closed: end it with </script>", raw)
        code = textwrap.dedent(body[match.end() : end.start()].strip("\r\n")).strip()
        if not code:
            raise _error(f"plan item {number}: the <script> is empty: write the code or instructions in it", raw)
        items.append(Subgoal(kind="script", text=code))
        newline = body.find("\n", end.end())
        pos = len(body) if newline < 0 else newline + 1
        if body[end.end() : pos].strip():
            raise _error(f"plan item {number}: start a new line after </script>", raw)
    _line_items(body[pos:].split("\n"), items, raw)
    if not items:
        raise _error("the <plan> is empty: list the remaining subgoals, one per line, or answer with "
                     '<request_accomplished success="true|false">', raw)
    return items


def _parse_final(attrs: str, body: str, raw: str) -> Final:
    """The ``success`` attribute (required, true or false) and the answer."""
    found: dict[str, str] = {}
    pos, rest = 0, attrs.strip()
    while pos < len(rest):
        match = _ATTR.match(rest, pos)
        if match is None:
            raise _error(f"cannot read the attributes {_shown(rest)!r} of <request_accomplished>: "
                         'write <request_accomplished success="true"> or success="false"', raw)
        name = match.group(1).lower()
        if name != "success":
            raise _error(f"<request_accomplished> has an unknown attribute {_shown(name)!r}: "
                         'it takes only success="true" or success="false"', raw)
        if name in found:
            raise _error("<request_accomplished> has the success attribute twice: give it once", raw)
        found[name] = next(v for v in match.group(2, 3, 4) if v is not None)
        pos = match.end()
    if "success" not in found:
        raise _error('<request_accomplished> needs success="true" or success="false"', raw)
    value = found["success"].strip().lower()
    if value not in ("true", "false"):
        raise _error(f'success must be "true" or "false", not {_shown(found["success"])!r}', raw)
    answer = body.strip()
    if not answer:
        raise _error("<request_accomplished> is empty: put the answer (or, if it failed, the reason) inside it", raw)
    return Final(success=value == "true", answer=answer)


def parse_manager_reply(text: str) -> ManagerReply:
    """Parse and validate the manager's reply.

    Raises:
        ManagerReplyError: the reply breaks the format; the message says what to fix.
    """
    tags = _split_tags(text)
    given = [name for name, found in (("<plan>", tags.plans), ("<request_accomplished>", tags.finals),
                                      ("<ask_user>", tags.questions)) if found]
    if not given:
        raise _error('the reply has neither <plan> nor <request_accomplished success="true|false"> nor '
                     "<ask_user>: give exactly one of them", text)
    if len(given) > 1:
        raise _error(f"the reply has both {given[0]} and {given[1]}: give a plan while work remains, "
                     "request_accomplished when the task is over, or ask_user when only the user can say how "
                     "to go on; exactly one", text)
    if len(tags.questions) > 1:
        raise _error(f"the reply has {len(tags.questions)} <ask_user> tags: ask one question", text)
    if tags.questions:
        if not tags.questions[0]:
            raise _error("<ask_user> is empty: put your question for the user inside it", text)
        return ManagerReply(thought="\n\n".join(t for t in tags.thoughts if t), memory=tags.memory,
                            question=tags.questions[0])
    if len(tags.plans) > 1:
        raise _error(f"the reply has {len(tags.plans)} <plan> tags: merge them into one <plan>", text)
    if len(tags.finals) > 1:
        raise _error(f"the reply has {len(tags.finals)} <request_accomplished> tags: give exactly one", text)
    thought = "\n\n".join(t for t in tags.thoughts if t)
    if tags.plans:
        return ManagerReply(thought=thought, memory=tags.memory, plan=_parse_plan(tags.plans[0], text))
    return ManagerReply(thought=thought, memory=tags.memory, final=_parse_final(*tags.finals[0], text))


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def remember(existing: list[str], new: Iterable[str], *, limit: int = 20, max_chars: int = 300) -> list[str]:
    """``existing`` with the ``new`` items appended: whitespace collapsed, items longer than
    ``max_chars`` cut (ending in "…"), blank items and duplicates (ignoring case and whitespace)
    dropped, and only the last ``limit`` items kept. A duplicate keeps its earlier place.
    ``existing`` itself is not changed."""
    if limit < 1 or max_chars < 1:
        raise ValueError("limit and max_chars must be at least 1")
    out = list(existing)
    seen = {_key(item) for item in existing}
    for item in new:
        text = " ".join(item.split())
        if not text or _key(text) in seen:
            continue
        if len(text) > max_chars:
            text = text[: max_chars - 1].rstrip() + "…"
            if _key(text) in seen:
                continue
        seen.add(_key(text))
        out.append(text)
    return out[-limit:]
