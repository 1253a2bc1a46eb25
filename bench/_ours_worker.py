"""Our side of ``bench/perception.py``'s timing, in a fresh process like DroidRun's worker.

Reads a job from stdin, ``{"repeat": N, "dumps": [{"path"}, ...]}``, and prints one JSON line per
dump: ``{"dump", "ms", "lxml_ms"}``, the median of ``N`` runs (after one warm-up run) of
``build_ui_state`` on the dump's bytes: XML -> the model's text, timed exactly as
``_droidrun_worker.py`` times DroidRun's XML -> text; and, as the floor, the median of a bare lxml
parse of the same bytes (``lxml_parse``), timed the same way in the same process. Both ours and
DroidRun's run in a process of their own that does nothing else, so neither pays for what the
other's process holds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _droidrun_worker import _median_ms  # noqa: E402  (stdlib only: safe to import here)
from lxml import etree  # noqa: E402

from ufo_mobile.core.ui.state import build_ui_state  # noqa: E402

_BARE = etree.XMLParser(recover=True)


def lxml_parse(raw: bytes) -> object:
    """The baseline: lxml parses the dump into its element tree, and nothing more."""
    return etree.fromstring(raw, _BARE)


def main() -> int:
    job = json.load(sys.stdin)
    repeat = int(job["repeat"])
    for item in job["dumps"]:
        path = Path(item["path"])
        raw = path.read_bytes()
        ms = _median_ms(lambda raw=raw: build_ui_state(raw, observation_id="bench"), repeat)  # type: ignore[misc]
        lxml_ms = _median_ms(lambda raw=raw: lxml_parse(raw), repeat)  # type: ignore[misc]
        print(json.dumps({"dump": path.name, "ms": ms, "lxml_ms": lxml_ms}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
