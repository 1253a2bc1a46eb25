"""A suite file read as plain data plus the line of every key path, for one-line errors.

Files are read through ``ufo_mobile.yamlio`` (bounded size, alias expansion and depth), so the
recursive walk below meets at most ``yamlio.MAX_NODES`` nodes, ``yamlio.MAX_DEPTH`` deep.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ufo_mobile import yamlio
from ufo_mobile.errors import ConfigError
from ufo_mobile.safe_text import printable


class Doc:
    """One YAML file: ``data`` and ``error(message, key_path)`` naming file, line and key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: dict[tuple[str, ...], int] = {(): 1}
        node = yamlio.compose_file(path)  # ConfigError: unreadable, too big, not YAML
        self.data: Any = None if node is None else self._build(node, ())

    def _build(self, node: yaml.Node, at: tuple[str, ...]) -> Any:
        self.lines.setdefault(at, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                line = key_node.start_mark.line + 1
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self.error("a key must be a name, not a list or a mapping", at, line=line)
                key = str(yamlio.construct(key_node, str(self.path)))
                if key in out:
                    raise self.error("duplicate key", (*at, key), line=line)
                self.lines[(*at, key)] = line
                out[key] = self._build(value_node, (*at, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self._build(item, (*at, str(i))) for i, item in enumerate(node.value)]
        return yamlio.construct(node, str(self.path))

    def line_of(self, key: Sequence[str]) -> int:
        """The line of ``key``, or of its nearest parent that is in the file."""
        key = tuple(key)
        for n in range(len(key), -1, -1):
            if key[:n] in self.lines:
                return self.lines[key[:n]]
        return 1

    def error(self, message: str, key: Sequence[str], *, line: int | None = None) -> ConfigError:
        """A ``ConfigError`` naming this file, ``key`` and its line (``line`` if given)."""
        return ConfigError(message, path=str(self.path), key=printable(".".join(key)) or None,
                           line=line or self.line_of(key))


