"""Bounded YAML reading: every YAML file the runtime reads (settings, task files, model scripts,
prompt templates, simulated apps) comes through here.

Why bounds: YAML anchors and aliases let a few hundred bytes describe billions of nodes ("billion
laughs"). PyYAML composes such a file cheaply because an alias shares the anchored node, but every
walk after it (settings, pydantic, our own checks) expands the aliases and runs out of memory. An
alias may also refer to the node that contains it, a cycle on which naive walks recurse forever.

What is bounded, before anything is constructed:

- the file size, ``MAX_FILE_BYTES`` (stat first, and the read itself stops one byte past it);
- the encoding: strict UTF-8 (a BOM is allowed), so a binary file is one line, not a traceback;
- the nesting depth, ``MAX_DEPTH``, both while composing (the composer recurses) and after alias
  expansion;
- the number of nodes, ``MAX_NODES``, while composing (so a big flat file stops early too) and after
  alias expansion, with ``MAX_TEXT_CHARS`` characters of scalar text: the expanded figures come from
  one iterative walk of the composed graph, memoised on node identity, so the check is linear in
  the file and a bomb is rejected in milliseconds;
- cycles: an alias inside the node it refers to.

Events come from libyaml's C parser where PyYAML has it (the pure-Python one otherwise); the
composing above them is PyYAML's Python composer with the bounds added (libyaml's own composer
recurses in C with no bound we could set). libyaml refuses 1000 or more levels of nesting itself,
while scanning ahead, before our composer sees that deep: such a file gets libyaml's reason instead of
ours, in the same one-line form. Every failure is a ``ConfigError`` whose text is one line:
``file:line: message``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.reader import ReaderError

from ufo_mobile.errors import ConfigError
from ufo_mobile.safe_text import printable

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Largest YAML file read (bytes; characters for text in hand). The biggest shipped file has 12 KB."""
MAX_NODES = 100_000
"""Most nodes once aliases are expanded; the biggest shipped file (sim/apps/settings.yaml) has 1,621."""
MAX_TEXT_CHARS = 16 * 1024 * 1024
"""Most characters of scalar text once aliases are expanded (one long string aliased many times)."""
MAX_DEPTH = 64
"""Deepest nesting, counting the root and the scalars; the shipped files nest at most 12 deep."""

_PROBLEM_CHARS = 300


@dataclass(frozen=True)
class YamlLimits:
    """The bounds applied to one document; the defaults are the module constants."""

    max_bytes: int = MAX_FILE_BYTES
    max_nodes: int = MAX_NODES
    max_text_chars: int = MAX_TEXT_CHARS
    max_depth: int = MAX_DEPTH


DEFAULT_LIMITS = YamlLimits()


# --- reading and decoding ----------------------------------------------------------------------


def read_text(path: Path, *, limits: YamlLimits = DEFAULT_LIMITS) -> str:
    """The text of ``path``, size-bounded and decoded as strict UTF-8 (a leading BOM is dropped)."""
    source = str(path)
    try:
        size = path.stat().st_size
        if size > limits.max_bytes:
            raise _too_large(source, f"{size} bytes", limits.max_bytes)
        with path.open("rb") as stream:  # the file may grow after stat, or be a pipe
            data = stream.read(limits.max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=source) from exc
    if len(data) > limits.max_bytes:
        raise _too_large(source, f"more than {limits.max_bytes} bytes", limits.max_bytes)
    return decode(data, source)


def decode(data: bytes, source: str) -> str:
    """Strict UTF-8; the error names the first bad byte, its offset and its line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                          path=source, line=line) from exc
    return text.removeprefix("\ufeff")


def _too_large(source: str, size: str, limit: int) -> ConfigError:
    return ConfigError(f"file too large: {size}, the limit is {limit} bytes", path=source)


# --- entry points ------------------------------------------------------------------------------


def compose_file(path: Path, *, limits: YamlLimits = DEFAULT_LIMITS) -> yaml.Node | None:
    """The checked node graph of a one-document file (None when it is empty); nodes carry marks."""
    return compose_text(read_text(path, limits=limits), str(path), limits=limits)


def load_file(path: Path, *, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """The Python data of a one-document file (None when it is empty)."""
    return construct(compose_file(path, limits=limits), str(path))


def load_text(text: str, source: str, *, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """Like ``load_file`` for text already in hand; ``source`` names it in errors."""
    return construct(compose_text(text, source, limits=limits), source)


def compose_text(text: str, source: str, *, limits: YamlLimits = DEFAULT_LIMITS) -> yaml.Node | None:
    """Compose one document with bounded nesting, then check its expanded size, depth and cycles."""
    text = text.removeprefix("\ufeff")
    if len(text) > limits.max_bytes:
        raise ConfigError(f"text too large: {len(text)} characters, the limit is {limits.max_bytes}",
                          path=source)
    try:
        loader = _BoundedLoader(text, source, limits)  # checks the characters
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source, text) from exc
    except UnicodeEncodeError as exc:  # a lone surrogate: only from text made in Python, never from a file
        raise ConfigError(f"not valid text (character {exc.start})", path=source) from exc
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source, text) from exc
    except RecursionError as exc:  # only if the caller's own stack is already nearly full
        raise ConfigError(f"nested too deeply (the limit is {limits.max_depth} levels)", path=source) from exc
    finally:
        loader.dispose()
    if root is not None:
        _check_graph(root, source, limits, loader.anchor_names)
    return root


def construct(node: yaml.Node | None, source: str) -> Any:
    """Python data (SafeConstructor) of a node graph from ``compose_*``; merge keys are applied."""
    if node is None:
        return None
    try:
        return _Constructor().construct_document(node)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source, "") from exc


# --- composing ---------------------------------------------------------------------------------


# libyaml's C parser (shipped in PyYAML's wheels) turns text into events about seven times faster
# than the pure-Python one: most of the CPU a run spends before its first step. The composing above
# the events stays in Python, where the bounds below are enforced.
_Parser: Any = getattr(yaml, "CParser", None) or getattr(getattr(yaml, "_yaml", None), "CParser", None)


class _PythonEvents(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """The pure-Python event source, for a PyYAML built without libyaml."""

    def __init__(self, text: str) -> None:
        yaml.reader.Reader.__init__(self, text)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


_Events: Any = _Parser if yaml.__with_libyaml__ and _Parser is not None else _PythonEvents


class _BoundedLoader(yaml.composer.Composer, _Events, yaml.resolver.Resolver):  # type: ignore[misc]
    """A safe composer over libyaml's events, refusing to nest deeper than ``max_depth`` or to make
    more than ``max_nodes`` nodes while composing. It remembers each anchored node's name for the
    cycle message.
    """

    def __init__(self, text: str, source: str, limits: YamlLimits) -> None:
        _Events.__init__(self, text)
        yaml.resolver.Resolver.__init__(self)
        yaml.composer.Composer.__init__(self)
        self.source = source
        self.limits = limits
        self.anchor_names: dict[int, str] = {}
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: yaml.Event = self.peek_event()  # untyped in the stubs
        if self._depth >= self.limits.max_depth:
            raise _too_deep(self.source, self.limits.max_depth, event.start_mark)
        if not isinstance(event, yaml.AliasEvent):
            self._nodes += 1
            if self._nodes > self.limits.max_nodes:
                raise ConfigError(f"too many nodes: more than {self.limits.max_nodes} in the document",
                                  path=self.source, line=_mark_line(event.start_mark))
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.AliasEvent) and node is not None:
            self.anchor_names[id(node)] = anchor
        return node


class _Constructor(SafeConstructor):
    """SafeConstructor whose failures on malformed tagged scalars (``!!int x``, ``!!bool x``,
    ``!!timestamp x``) become YAML errors with the node's mark instead of bare Python errors."""

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            raise ConstructorError(
                None, None, f"cannot construct {node.tag} from {str(node.value)[:40]!r}: {exc}",
                node.start_mark) from exc


def _yaml_error(exc: yaml.YAMLError, source: str, text: str) -> ConfigError:
    line: int | None = None
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = ", ".join(part for part in (exc.context, exc.problem) if part) or "malformed"
    elif isinstance(exc, ReaderError):
        line = text.count("\n", 0, exc.position) + 1 if text else None
        code = exc.character if isinstance(exc.character, int) else -1
        problem = f"unacceptable character #x{code:04x}: {exc.reason}"
    else:
        problem = str(exc)
    return ConfigError(f"invalid YAML: {printable(problem, _PROBLEM_CHARS)}", path=source, line=line)


# --- the expansion check -----------------------------------------------------------------------


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return itertools.chain.from_iterable(node.value)
    if isinstance(node, yaml.SequenceNode):
        return iter(node.value)
    return iter(())


@dataclass
class _Measure:
    """Expanded size of each finished node, keyed by ``id(node)``."""

    nodes: dict[int, int]
    chars: dict[int, int]
    height: dict[int, int]


def _check_graph(root: yaml.Node, source: str, limits: YamlLimits, names: dict[int, str]) -> None:
    """Depth-first, iterative, each distinct node measured once (aliases share nodes)."""
    done = _Measure({}, {}, {})
    open_ids = {id(root)}
    stack: list[tuple[yaml.Node, Iterator[yaml.Node]]] = [(root, _children(root))]
    while stack:
        node, pending = stack[-1]
        child = next(pending, None)
        if child is None:
            stack.pop()
            open_ids.discard(id(node))
            _finish(node, done, source, limits)
        elif id(child) in open_ids:
            name = names.get(id(child), "?")
            raise ConfigError(f"alias *{name} refers to a node that contains it (a cycle)",
                              path=source, line=_line(child))
        elif id(child) not in done.nodes:
            if len(stack) >= limits.max_depth:
                raise _too_deep(source, limits.max_depth, child.start_mark)
            open_ids.add(id(child))
            stack.append((child, _children(child)))


def _finish(node: yaml.Node, done: _Measure, source: str, limits: YamlLimits) -> None:
    keys = [id(child) for child in _children(node)]
    nodes = 1 + sum(done.nodes[k] for k in keys)
    chars = len(node.value) if isinstance(node, yaml.ScalarNode) else sum(done.chars[k] for k in keys)
    height = 1 + max((done.height[k] for k in keys), default=0)
    if nodes > limits.max_nodes:
        raise ConfigError(f"too many nodes: {nodes} here with aliases expanded, the limit is {limits.max_nodes}",
                          path=source, line=_line(node))
    if chars > limits.max_text_chars:
        raise ConfigError(f"too much text: {chars} characters here with aliases expanded, "
                          f"the limit is {limits.max_text_chars}", path=source, line=_line(node))
    if height > limits.max_depth:
        raise _too_deep(source, limits.max_depth, node.start_mark)
    done.nodes[id(node)] = nodes
    done.chars[id(node)] = chars
    done.height[id(node)] = height


def _too_deep(source: str, limit: int, mark: Any) -> ConfigError:
    return ConfigError(f"nested more than {limit} levels deep (aliases included)", path=source,
                       line=_mark_line(mark))


def _mark_line(mark: Any) -> int | None:
    line = getattr(mark, "line", None)
    return line + 1 if isinstance(line, int) else None


def _line(node: yaml.Node) -> int | None:
    return node.start_mark.line + 1 if node.start_mark is not None else None
