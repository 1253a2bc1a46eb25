"""The HTML report in a real headless Chromium, driven over the DevTools protocol (tests/chromium.py).

Runs are made the way a user makes them: the command line on the simulated phone, in this process
(finished, failed) or as a process stopped by Ctrl-C or killed (interrupted, cut off); ``report``
writes the page. In the browser: every image decodes, the outcome and step count shown are the
run's, a failed run opens with why, every embedded font loads, the page asks for nothing but
itself and its data, and a screenshot of the page is saved next to it (``report.png``).

A second test checks that Cyrillic and CJK text is drawn with glyphs: the embedded Noto faces are
the fonts Chromium used for it, and its pixels differ clearly from the same text in a font that
draws every one of those characters as an empty box (the known-bad rendering).

Skipped, with the reason, where no Chromium is installed (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import signal
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import websockets
from PIL import Image, ImageChops

from tests.chromium import Cdp, Chromium, Page, find_chromium
from tests.faults.conftest import Cli, log_events, session_processes, wait_until, write_task
from tests.fonts import build_font, require_noto
from tests.unit.test_cli_runs import DEMO, TASKS, run_cli

pytestmark = pytest.mark.integration

CHROMIUM = find_chromium()
LAUNCH = {"status": "CONTINUE", "thought": "open", "action": {"name": "open_app", "args": {"text": "Settings"}}}
TAP_WIFI = {"status": "CONTINUE", "thought": "tap", "action": {"name": "click", "args": {"index": 3, "text": "Wi-Fi"}}}
SLOW_TAP = {"delay_seconds": 600, "reply": TAP_WIFI}  # the run is certainly inside it when stopped
CYRILLIC, CJK = "Открыть настройки", "打开设置页面"
T = TypeVar("T")


@pytest.fixture
def chromium() -> Iterator[Chromium]:
    if CHROMIUM is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium): the report is not checked in a browser")
    browser = Chromium(CHROMIUM)
    try:
        yield browser
    finally:
        browser.stop()
        # SIGKILLed helpers of a big browser take a moment to be torn down by the kernel (longer on a
        # loaded machine): wait for them to be gone; the bound is only a hang guard
        wait_until(lambda: not session_processes(browser.proc.pid), "chromium's processes to end")


def in_page(chromium: Chromium, work: Callable[[Page], Awaitable[T]]) -> T:
    """Run ``work`` on a new tab of ``chromium`` (the runs themselves are made before, outside any
    event loop: a run handles signals, so it wants the main thread and no loop of the test's)."""
    async def session() -> T:
        async with websockets.connect(chromium.endpoint(), max_size=None, open_timeout=60) as ws:
            cdp = Cdp(ws)
            try:
                return await work(await Page.open(cdp))
            finally:
                await cdp.close()

    return asyncio.run(session())


def _report(run_dir: Path) -> Path:
    code, out = run_cli("report", str(run_dir))
    last = out.rstrip("\n").split("\n")[-1]
    assert last == f"report: {run_dir / 'report.html'}", out
    return run_dir / "report.html"


def _only_run(log_dir: Path) -> Path:
    (run_dir,) = [p for p in log_dir.iterdir() if p.is_dir()]
    return run_dir


def finished_run(tmp_path: Path) -> Path:
    code, out = run_cli("run", str(DEMO), "--log-dir", str(tmp_path / "logs"), "--quiet")
    assert code == 0, out
    return _only_run(tmp_path / "logs")


def failed_run(tmp_path: Path) -> Path:
    code, out = run_cli("run", str(TASKS / "fail_model.yaml"), "--log-dir", str(tmp_path / "logs"), "--quiet")
    assert code == 1, out
    return _only_run(tmp_path / "logs")


def _stopped_run(tmp_path: Path, signum: int) -> Path:
    """A run of the real command line stopped by ``signum`` while step 2 waits for the model."""
    task = write_task(tmp_path, [LAUNCH, SLOW_TAP])
    run = Cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    run.wait_line("step   1")
    wait_until(lambda: any(e.get("event") == "model_call" and e.get("step") == 2
                           for e in log_events(tmp_path / "logs")), "step 2 asks the model")
    run.signal(signum)
    code, out, err = run.finish()
    assert code == (130 if signum == signal.SIGINT else -signal.SIGKILL), out + err
    return _only_run(tmp_path / "logs")


def interrupted_run(tmp_path: Path) -> Path:
    return _stopped_run(tmp_path, signal.SIGINT)


def cut_off_run(tmp_path: Path) -> Path:
    return _stopped_run(tmp_path, signal.SIGKILL)


async def _open(page: Page, report: Path) -> None:
    await page.goto(report.as_uri())
    await page.js("document.fonts.ready.then(() => true)")


async def _facts(page: Page) -> dict[str, Any]:
    return await page.js("""(async () => {
        const images = [...document.images];
        await Promise.all(images.map(i => i.decode()));
        const fonts = [...document.fonts];
        const loaded = await Promise.allSettled(fonts.map(f => f.load()));
        const position = (a, b) => a && b ? a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
        const breakBox = document.getElementById('break');
        return {
            images: images.length, broken: images.filter(i => !(i.complete && i.naturalWidth > 0)).length,
            outcome: document.getElementById('outcome').dataset.outcome,
            outcomeText: document.getElementById('outcome').innerText,
            steps: Number(document.getElementById('step-count').dataset.steps),
            articles: document.querySelectorAll('article.step').length,
            failureFirst: position(document.getElementById('failure'), document.getElementById('timeline')) > 0,
            failure: !!document.getElementById('failure'),
            breakText: breakBox ? breakBox.innerText : null,
            breakVisible: breakBox ? breakBox.getBoundingClientRect().height > 0 : false,
            fonts: fonts.length, fontsLoaded: loaded.filter(r => r.status === 'fulfilled').length,
            highlighted: document.querySelectorAll('img[data-highlight]:not([data-highlight=""])').length,
            links: [...document.querySelectorAll('a.full, a.full-size')].map(a => a.href),
            afters: [...document.querySelectorAll('figure.after')].map(f => [f.dataset.after, f.innerText]),
            legend: document.querySelectorAll('#legend li').length,
            timeline: document.querySelectorAll('table.timeline tr[data-step]').length,
        };
    })()""")


@pytest.mark.parametrize("make", [finished_run, failed_run, interrupted_run, cut_off_run],
                         ids=["finished", "failed", "interrupted", "cut-off"])
def test_the_report_renders_in_chromium(tmp_path: Path, chromium: Chromium, make: Any) -> None:
    run_dir = make(tmp_path)
    report = _report(run_dir)
    result = json.loads((run_dir / "run.json").read_text())
    recorded = len((run_dir / "steps.jsonl").read_text().splitlines())

    async def look(page: Page) -> tuple[dict[str, Any], list[str], bytes]:
        await page.call("Log.enable")  # console messages, CSP violations among them
        await _open(page, report)
        facts = await _facts(page)
        facts["errors"] = [e["params"] for e in page.cdp.seen("Runtime.exceptionThrown", page.session)] + [
            e["params"]["entry"] for e in page.cdp.seen("Log.entryAdded", page.session)
            if e["params"]["entry"]["level"] == "error"]
        shot = await page.screenshot()  # before another tab opens: a tab in the background draws no frames
        facts["full"] = await _full_size(page, facts["links"][0]) if facts["links"] else None
        return facts, page.requests(), shot

    facts, requests, png = in_page(chromium, look)
    assert not facts["errors"], facts["errors"]
    _check_why(run_dir, facts)
    assert facts["images"] >= recorded + (result["status"] != "FINISH") and facts["broken"] == 0, facts
    assert (facts["outcome"], facts["outcomeText"]) == (result["status"], result["status"])
    assert facts["steps"] == recorded and facts["articles"] >= recorded, facts
    assert facts["fonts"] >= 1 and facts["fontsLoaded"] == facts["fonts"], facts
    if result["status"] == "FINISH":
        assert not facts["failure"] and facts["breakText"] is None and facts["highlighted"] >= 2
    else:
        assert facts["failure"] and facts["failureFirst"], facts
    if make is interrupted_run:
        assert facts["breakVisible"] and "interrupted" in facts["breakText"], facts
        assert result["reason"] == "interrupted" and facts["steps"] == 2
    if make is cut_off_run:
        assert facts["breakVisible"] and "cut off" in facts["breakText"], facts
    assert all(url == report.as_uri() or url.startswith("data:") for url in requests), requests
    (run_dir / "report.png").write_bytes(png)
    shot = Image.open(io.BytesIO(png))
    assert shot.width == 1280 and shot.height > 900


async def _full_size(page: Page, url: str) -> dict[str, Any]:
    """A full-size link opened in a tab of its own: the image it shows."""
    tab = await Page.open(page.cdp)
    await tab.goto(url)
    return await tab.js("({width: document.images[0].naturalWidth, height: document.images[0].naturalHeight})")


def _check_why(run_dir: Path, facts: dict[str, Any]) -> None:
    """Every full-size link opens a file of the run; every action has its screen after (or, for a run
    stopped before one was taken, says so); the legend and the timeline are there."""
    lines = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    acted = [x for x in lines if x.get("action") or x.get("outcomes")]
    assert facts["links"] and all(u.startswith(run_dir.as_uri() + "/") for u in facts["links"]), facts["links"]
    assert all(Path(urllib.parse.unquote(urllib.parse.urlparse(u).path)).is_file() for u in facts["links"])
    assert facts["full"]["width"] > 0 and facts["full"]["height"] > facts["full"]["width"], facts["full"]  # a phone
    assert len(facts["afters"]) == len(acted) >= 1, facts["afters"]
    for after, words in facts["afters"]:
        assert after or "the run stopped before the screen after this action was recorded" in words, words
    assert facts["legend"] >= 8 and facts["timeline"] == facts["articles"] >= len(lines), facts


def _tofu_font(chars: str) -> bytes:
    """A font with every character of ``chars``, each drawn as the same hollow box: what a page shows
    when its font has no glyph for them (the known-bad rendering)."""
    return build_font("Tofu", chars)


async def _element_png(page: Page, selector: str) -> Image.Image:
    rect = await page.js(f"""(() => {{
        const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();
        return {{x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height}};
    }})()""")
    assert rect["width"] > 20 and rect["height"] > 8, rect
    return Image.open(io.BytesIO(await page.screenshot(rect))).convert("L")


async def _fonts_used(page: Page, selector: str) -> dict[str, bool]:
    """The fonts Chromium drew the text of ``selector`` with: {family: embedded?}."""
    document = await page.call("DOM.getDocument", {"depth": 0})
    node = await page.call("DOM.querySelector", {"nodeId": document["root"]["nodeId"], "selector": selector})
    fonts = await page.call("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
    return {f["familyName"]: f["isCustomFont"] for f in fonts["fonts"]}


def _ink(image: Image.Image) -> int:
    return sum(image.histogram()[:128])


def test_cyrillic_and_cjk_are_drawn_as_glyphs_not_boxes(tmp_path: Path, chromium: Chromium) -> None:
    require_noto()
    reply = {**LAUNCH, "thought": CJK}
    task = write_task(tmp_path, [reply, {"status": "FINISH", "result": f"{CYRILLIC} {CJK}"}], task=CYRILLIC)
    code, out = run_cli("run", str(task), "--log-dir", str(tmp_path / "logs"), "--quiet")
    assert code == 0, out
    report = _report(_only_run(tmp_path / "logs"))
    targets = {"#task": CYRILLIC, "#step-1 .thought": CJK}
    tofu = base64.b64encode(_tofu_font(CYRILLIC + CJK)).decode()

    async def look(page: Page) -> tuple[dict[str, Any], dict[str, Image.Image], dict[str, Image.Image]]:
        await _open(page, report)
        await page.call("DOM.enable")
        await page.call("CSS.enable")
        texts = {s: await page.js(f"document.querySelector({json.dumps(s)}).textContent") for s in targets}
        good = {s: await _element_png(page, s) for s in targets}
        used = {s: await _fonts_used(page, s) for s in targets}
        await page.js(f"""(async () => {{
            const style = document.createElement('style');
            style.textContent = '@font-face {{ font-family: tofu; src: url(data:font/ttf;base64,{tofu}); }} '
                + '#task, #step-1 .thought {{ font-family: tofu !important; }}';
            document.head.append(style);
            await document.fonts.load('16px tofu', 'Ж设');
            await document.fonts.ready;
            return true;
        }})()""")
        used["bad"] = await _fonts_used(page, "#task")
        bad = {s: await _element_png(page, s) for s in targets}
        return {"texts": texts, "used": used}, good, bad

    facts, good, bad = in_page(chromium, look)
    assert facts["texts"] == targets
    assert facts["used"] == {"#task": {"Noto Sans": True}, "#step-1 .thought": {"Noto Sans CJK SC": True},
                             "bad": {"Tofu": True}}
    for selector in targets:
        drawn, boxes = good[selector], bad[selector]
        assert _ink(drawn) > 150, selector  # the glyphs have ink
        width, height = min(drawn.width, boxes.width), min(drawn.height, boxes.height)
        difference = ImageChops.difference(drawn.crop((0, 0, width, height)), boxes.crop((0, 0, width, height)))
        assert sum(difference.histogram()[65:]) > 0.3 * _ink(drawn), selector


async def _marked_pixels(page: Page) -> list[dict[str, Any]]:
    """For every picture with marks over it: the colour Chromium drew at the middle of the top edge
    of its target box (before) or of its first change box (after), and at the box's centre."""
    found = await page.js("""(() => [...document.querySelectorAll('span.frame > img')].map(img => {
        const r = img.getBoundingClientRect();
        const rect = img.parentElement.querySelector('svg.marks rect[stroke="#00c8ff"]');
        return {cls: img.className, left: r.left + window.scrollX + 1, top: r.top + window.scrollY + 1,
                scale: (r.width - 2) / img.naturalWidth, natural: [img.naturalWidth, img.naturalHeight],
                box: img.dataset.highlight || '',
                change: rect ? ['x', 'y', 'width', 'height', 'stroke-width'].map(k => +rect.getAttribute(k)) : null};
    }))()""")
    out = []
    for item in found:
        if item["cls"] == "before":
            left, top, right, bottom = (int(v) for v in item["box"].split(","))
            line = max(3, round(max(item["natural"]) / 200))
            edge, middle = ((left + right + 1) / 2, top + line / 2), ((left + right + 1) / 2, (top + bottom + 1) / 2)
        else:
            x, y, width, height, line = item["change"]
            edge, middle = (x + width / 2, y), (x + width / 2, y + height / 2)
        colours = []
        for px, py in (edge, middle):
            clip = {"x": int(item["left"] + px * item["scale"]), "y": int(item["top"] + py * item["scale"]),
                    "width": 1, "height": 1}
            colours.append(Image.open(io.BytesIO(await page.screenshot(clip))).convert("RGB").getpixel((0, 0)))
        out.append({"cls": item["cls"], "edge": colours[0], "middle": colours[1]})
    return out


def test_the_marks_over_the_pictures_land_on_their_pixels(tmp_path: Path, chromium: Chromium) -> None:
    """The action's target and the change boxes are an SVG over each picture: in the page the run
    wrote (its kept small copies embedded as they are) and in the one ``report`` makes later from
    the files, Chromium draws the magenta box on the target's edge and the cyan one on the change's."""
    from ufo_mobile.report.images import CHANGED, HIGHLIGHT

    run_dir = finished_run(tmp_path)
    written = (run_dir / "report.html").read_text()
    later = _report(run_dir)
    (run_dir / "written.html").write_text(written)
    for page_file in (run_dir / "written.html", later):
        found = in_page(chromium, lambda page, f=page_file: _look_marks(page, f))
        kinds = {item["cls"] for item in found}
        assert kinds == {"before", "after"}, found
        for item in found:
            colour = HIGHLIGHT if item["cls"] == "before" else CHANGED
            assert all(abs(a - b) <= 40 for a, b in zip(item["edge"], colour, strict=True)), (page_file.name, item)
            assert not all(abs(a - b) <= 40 for a, b in zip(item["middle"], colour, strict=True)), item


async def _look_marks(page: Page, report: Path) -> list[dict[str, Any]]:
    await _open(page, report)
    await page.js("Promise.all([...document.images].map(i => i.decode())).then(() => true)")
    return await _marked_pixels(page)
