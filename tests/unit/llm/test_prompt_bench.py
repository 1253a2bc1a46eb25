"""bench/prompt.py measures what a real model would be sent: the demo's pictures, per step, by the
tiling rule (a whitespace word count stands in for the tokenizer; UFO's prompts are not read)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_prompt_under_test", ROOT / "bench" / "prompt.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_prompt_bench_measures_the_pictures_of_every_step() -> None:
    bench = load_bench()
    steps = bench.run_demo(lambda text: len(text.split()), None)
    assert len(steps) == 4  # the demo's four model calls
    assert [(s.ours_image, s.ufo_image) for s in steps] == [(595, 2890)] * 4  # 512x1139 vs two 1080x2400 PNGs
    assert all(s.ours_text > 0 and s.ufo_text > 0 for s in steps)
    assert sum(s.ours_image for s in steps) / sum(s.ufo_image for s in steps) <= 0.25
