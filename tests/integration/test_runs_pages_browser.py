"""The pages over many runs in a real headless Chromium (tests/chromium.py): an evaluation's ``eval.html``,
the ``eval --compare`` page and a batch's ``batch.html``, each made by the real command line.

In the browser: the score is shown, the rows come failures first (the tasks that got worse first on
the comparison), every link resolves to a file that exists and opens (a run's report loads with its
outcome), the page asks for nothing but itself, and nothing is logged as an error (a blocked
resource, a script error, a Content-Security-Policy violation).

Skipped, with the reason, where no Chromium is installed (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

import pytest
import websockets

from tests.chromium import Cdp, Chromium, Page, find_chromium
from tests.unit.eval.conftest import SUITE
from tests.unit.test_cli_runs import DEMO, TASKS, run_cli
from ufo_mobile.eval.page import PAGE_FILE, compare_page_path

pytestmark = pytest.mark.integration

CHROMIUM = find_chromium()
T = TypeVar("T")
TONES = {"fail": 0, "other": 1, "ok": 2}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    if CHROMIUM is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium): the pages are not checked in a browser")
    browser = Chromium(CHROMIUM)
    try:
        yield browser
    finally:
        browser.stop()


def in_page(chromium: Chromium, work: Callable[[Page], Awaitable[T]]) -> T:
    async def session() -> T:
        async with websockets.connect(chromium.endpoint(), max_size=None, open_timeout=60) as ws:
            cdp = Cdp(ws)
            try:
                page = await Page.open(cdp)
                await page.call("Log.enable")
                return await work(page)
            finally:
                await cdp.close()

    return asyncio.run(session())


def errors(page: Page) -> list[Any]:
    """What the page logged as an error: console errors, exceptions, blocked loads, CSP violations."""
    cdp = page.cdp
    logged = [e["params"]["entry"] for e in cdp.seen("Log.entryAdded", page.session)
              if e["params"]["entry"]["level"] == "error"]
    console = [e["params"] for e in cdp.seen("Runtime.consoleAPICalled", page.session)
               if e["params"]["type"] in ("error", "assert")]
    return logged + console + [e["params"] for e in cdp.seen("Runtime.exceptionThrown", page.session)]


FACTS = """(() => ({
    score: document.getElementById('score').innerText,
    rows: [...document.querySelectorAll('table.runs tbody tr[data-tone]')].map(r => [r.dataset.tone, r.dataset.key]),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    width: document.documentElement.scrollWidth, scripts: document.scripts.length,
}))()"""


async def open_link(page: Page, url: str) -> None:
    """Navigate to ``url`` and wait for its own load event (``Page.goto`` would take the first page's)."""
    before = page.cdp.seen("Page.loadEventFired", page.session)
    answer = await page.call("Page.navigate", {"url": url})
    assert not answer.get("errorText"), answer
    await page.cdp.event("Page.loadEventFired", page.session, where=lambda e: not any(e is b for b in before))


def look_at(chromium: Chromium, page_path: Path) -> dict[str, Any]:
    """The page's facts, the requests it made and its errors; then its first link opened."""
    async def work(page: Page) -> dict[str, Any]:
        await page.goto(page_path.as_uri())
        facts = await page.js(FACTS)
        facts["requests"], facts["errors"] = page.requests(), errors(page)
        if facts["links"]:
            await open_link(page, facts["links"][0])
            facts["opened"] = await page.js("document.getElementById('outcome').dataset.outcome")
        return facts

    return in_page(chromium, work)


def check(facts: dict[str, Any], page_path: Path, links: int) -> None:
    assert facts["errors"] == [] and facts["scripts"] == 0, facts["errors"]
    assert facts["requests"] == [page_path.as_uri()], facts["requests"]
    tones = [TONES[tone] for tone, _ in facts["rows"]]
    assert tones == sorted(tones), facts["rows"]  # the failures first
    assert len(facts["links"]) == links, facts["links"]
    for url in facts["links"]:
        parsed = urlparse(url)
        assert parsed.scheme == "file" and Path(unquote(parsed.path)).is_file(), url
    assert facts["opened"] in ("FINISH", "FAIL")
    assert facts["width"] <= 1280  # nothing overflows the window sideways


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The give-up model and the oracle on the clock tasks, with every run's report."""
    base = tmp_path_factory.mktemp("runs-pages")
    config = base / "fast.yaml"
    config.write_text("perception: {annotate: false, settle_timeout_seconds: 0}\n")
    made = {}
    for model in ("oracle", "give-up"):
        code, out = run_cli("eval", str(SUITE), "--model", model, "--tasks", "clock-*", "--parallel", "2",
                            "--config", str(config), "--log-dir", str(base / model), "--quiet")
        assert code == 0, out
        (made[model],) = (base / model).iterdir()
    return made


def test_eval_html_in_chromium(chromium: Chromium, evals: dict[str, Path]) -> None:
    page_path = evals["give-up"] / PAGE_FILE
    facts = look_at(chromium, page_path)
    check(facts, page_path, links=4)
    assert facts["score"] == "1/4 runs passed (25.0%)"
    assert [tone for tone, _ in facts["rows"]] == ["fail", "fail", "fail", "ok"]
    assert facts["rows"][-1][1] == "clock-impossible-delete s0"  # the one the give-up model passes


def test_the_comparison_page_in_chromium(chromium: Chromium, evals: dict[str, Path]) -> None:
    code, out = run_cli("eval", "--compare", str(evals["oracle"]), str(evals["give-up"]))
    assert code == 0, out
    page_path = compare_page_path(evals["oracle"], evals["give-up"])
    facts = look_at(chromium, page_path)
    check(facts, page_path, links=8)  # each task's run on both sides
    assert facts["score"] == "success rate: A 100.0% -> B 25.0% (-75.0 points)"
    assert [tone for tone, _ in facts["rows"]] == ["fail", "fail", "fail", "ok"]
    assert facts["rows"][-1][1] == "clock-impossible-delete"
    assert sum(evals["oracle"].name in url for url in facts["links"]) == 4


def test_batch_html_in_chromium(chromium: Chromium, tmp_path: Path) -> None:
    code, out = run_cli("batch", str(DEMO), str(TASKS / "fail_model.yaml"), "--devices", "sim:2", "--log-dir",
                        str(tmp_path), "--batch-id", "b1", "--quiet")
    assert code == 1, out
    page_path = tmp_path / "b1" / "batch.html"
    facts = look_at(chromium, page_path)
    check(facts, page_path, links=2)
    assert facts["score"] == "1/2 tasks finished, 1 failed"
    assert facts["rows"] == [["fail", "t02-a1"], ["ok", "t01-a1"]]
    assert facts["opened"] == "FAIL"  # the first link is the failed run's report
