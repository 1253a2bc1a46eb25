"""DroidRun's side of ``bench/perception.py``; runs inside the throwaway DroidRun venv, never in ours.

Reads a job from stdin, ``{"repeat": N, "dumps": [{"path", "width", "height"}, ...]}``, and prints
one JSON line per dump: ``{"dump", "text", "ms", "xml_ms", "xml_to_text_ms", "elements",
"kept_orders"}`` or ``{"dump", "error"}``. ``ms`` is the median of ``N`` runs of DroidRun's
``DetailedFilter`` plus ``IndexedFormatter`` on the dict tree (dict -> text); ``xml_ms`` the median
of its own XML -> dict conversion (``ElementTree`` plus ``_uiautomator_node_to_dict``);
``xml_to_text_ms`` the median of both as one call (XML -> text, timed as ours is). ``kept_orders`` are the document
positions (pre-order over ``<node>`` elements, as in ``ufo_mobile.core.ui.parse_hierarchy``) of the nodes
that reach DroidRun's text. ``--check`` prints the installed versions and exits.

The heavy package ``__init__`` modules (llama-index, device drivers) are bypassed: only the
filter, the formatter and the uiautomator converter are loaded (see shared notes, droidrun.md §6).
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
import time
import types
import xml.etree.ElementTree as ET
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

ORDER_KEY = "ufoBenchOrder"  # extra dict key; DroidRun's filter copies it, its formatter ignores it
_BYPASSED = {
    "mobilerun": [(), ("tools",)],
    "mobilerun_core_local": [(), ("driver",), ("driver", "android"), ("transport",), ("transport", "android")],
}

Tree = dict[str, Any]


class DroidRun:
    """The three DroidRun pieces the benchmark runs, loaded without their packages' ``__init__``."""

    def __init__(self) -> None:
        for package, subpackages in _BYPASSED.items():
            spec = importlib.util.find_spec(package)
            if spec is None or not spec.submodule_search_locations:
                raise ModuleNotFoundError(f"{package} is not installed in {sys.prefix}")
            root = Path(list(spec.submodule_search_locations)[0])
            for parts in subpackages:
                name = ".".join((package, *parts))
                module = types.ModuleType(name)
                module.__path__ = [str(root.joinpath(*parts))]
                sys.modules[name] = module
        from mobilerun.tools.filters.detailed_filter import DetailedFilter
        from mobilerun.tools.formatters.indexed_formatter import IndexedFormatter
        from mobilerun_core_local.driver.android import adb

        self.filter = DetailedFilter()
        self.formatter = IndexedFormatter()
        self.node_to_dict: Callable[[ET.Element], Tree] = adb._uiautomator_node_to_dict
        self.first_package: Callable[[Any], str | None] = adb._first_package

    def convert(self, raw: str) -> tuple[list[ET.Element], list[Tree]]:
        """The dump as DroidRun's ADB path converts it: XML slice, ``ElementTree``, its node converter."""
        start = raw.find("<?xml")
        start = raw.find("<hierarchy") if start < 0 else start
        end = raw.find("</hierarchy>", max(start, 0))
        if start < 0 or end < 0:
            raise ValueError("no complete <hierarchy> in the dump")
        root = ET.fromstring(raw[start:end + len("</hierarchy>")].strip())
        windows = list(root)
        return windows, [self.node_to_dict(child) for child in windows]

    def to_dict(self, raw: str, size: tuple[int, int]) -> Tree:
        """One tree for the filter: the only window, or a full-screen root holding all windows.

        DroidRun's ADB path passes a list for a multi-window dump, on which its filter crashes.
        """
        windows, children = self.convert(raw)
        counter = [0]
        for element, node in zip(windows, children, strict=True):
            _tag_orders(element, node, counter)
        if len(children) == 1:
            return children[0]
        width, height = size
        return {"className": "", "boundsInScreen": {"left": 0, "top": 0, "right": width, "bottom": height},
                "children": children}

    def xml_to_text(self, raw: str, size: tuple[int, int]) -> str:
        """The whole of DroidRun's path from a uiautomator dump to the model's text, as one call:
        ``convert``, the tree its filter takes (as ``to_dict`` makes it, without the bench's order
        tags), ``to_text``."""
        _, children = self.convert(raw)
        if len(children) == 1:
            tree = children[0]
        else:
            tree = {"className": "", "boundsInScreen": {"left": 0, "top": 0, "right": size[0], "bottom": size[1]},
                    "children": children}
        return self.to_text(tree, size)[0]

    def to_text(self, tree: Tree, size: tuple[int, int]) -> tuple[str, list[Tree], Tree | None]:
        """Filter plus format: the LLM-facing text, the indexed elements and the filtered tree."""
        context = {"screen_bounds": {"width": size[0], "height": size[1]}}
        phone_state = {"packageName": self.first_package(tree) or ""}
        filtered = self.filter.filter(tree, context)
        text, _focused, elements, _phone = self.formatter.format(filtered, phone_state)
        return text, elements, filtered


def _tag_orders(element: ET.Element, node: Tree, counter: list[int]) -> None:
    """Store each ``<node>``'s document position in its dict (walks both trees side by side)."""
    if element.tag == "node":
        node[ORDER_KEY] = counter[0]
        counter[0] += 1
    for child_element, child in zip(list(element), node.get("children") or [], strict=True):
        _tag_orders(child_element, child, counter)


def _kept_orders(tree: Tree | None) -> list[int]:
    """Document positions of the nodes left in the filtered tree, in the formatter's order."""
    orders: list[int] = []
    stack = [tree] if tree is not None else []
    while stack:
        node = stack.pop()
        if ORDER_KEY in node:
            orders.append(node[ORDER_KEY])
        stack.extend(reversed(node.get("children") or []))
    return orders


def _median_ms(action: Callable[[], object], repeat: int) -> float:
    action()  # warm-up, as on our side
    times = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        action()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1e6


def measure(droidrun: DroidRun, job: dict[str, Any], repeat: int) -> dict[str, Any]:
    """DroidRun's text and timings for one dump."""
    path = Path(job["path"])
    size = (int(job["width"]), int(job["height"]))
    raw = path.read_bytes().decode("utf-8", "replace")
    tree = droidrun.to_dict(raw, size)
    text, elements, filtered = droidrun.to_text(tree, size)
    kept = _kept_orders(filtered)
    return {
        "dump": path.name,
        "text": text,
        "elements": len(elements),
        "kept_orders": kept,
        "ms": _median_ms(lambda: droidrun.to_text(tree, size), repeat),
        "xml_ms": _median_ms(lambda: droidrun.convert(raw), repeat),
        "xml_to_text_ms": _median_ms(lambda: droidrun.xml_to_text(raw, size), repeat),
    }


def main(argv: list[str]) -> int:
    if "--check" in argv:
        DroidRun()
        print(json.dumps({name: version(name) for name in ("mobilerun", "mobilerun-core-local")}))
        return 0
    job = json.load(sys.stdin)
    droidrun = DroidRun()
    for item in job["dumps"]:
        try:
            result = measure(droidrun, item, int(job["repeat"]))
        except Exception as exc:  # report DroidRun's failure on this dump and go on
            result = {"dump": Path(item["path"]).name, "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(result, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
