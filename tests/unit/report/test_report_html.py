"""The report page: hostile text stays text, a failed run opens with why, the timeline covers every
agent, and nothing in the page reaches outside it."""

from __future__ import annotations

import base64
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from tests.fonts import require_noto, write_font
from tests.unit.report.fake_runs import make_run, step_line, write_step
from ufo_mobile.cli import main
from ufo_mobile.core.ui import fonts
from ufo_mobile.core.ui.fonts import faces_for
from ufo_mobile.report import render_report, webfonts
from ufo_mobile.report.webfonts import font_faces_css, page_text

HOSTILE = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>'q' \u202eevil\u202c \x1b]0;title\x07 &amp;"
TAGS = {"html", "head", "meta", "title", "style", "body", "main", "header", "section", "h1", "h2", "h3", "p", "span",
        "a", "table", "thead", "tbody", "tr", "th", "td", "div", "pre", "code", "details", "summary", "article",
        "figure", "figcaption", "img", "footer", "b", "ul", "ol", "li",
        "svg", "rect", "circle", "line"}  # the marks over a picture (report/overlay.py): numbers only
RUN_FILE = re.compile(r"steps/\d{4}/(annotated|screenshot)\.png|final\.png")  # a link to a file of the run


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def tags_of(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


def _hostile_run(tmp_path: Path) -> Path:
    run_dir = make_run(tmp_path, steps=2, status="FAIL", reason=HOSTILE, task=HOSTILE)
    line = step_line(1, thought=HOSTILE, agent=HOSTILE, parse_errors=[HOSTILE], error=HOSTILE,
                     action={"name": "type", "args": {"text": HOSTILE, "index": 3}},
                     result={"success": False, "summary": HOSTILE})
    folder = write_step(run_dir, line)
    (folder / "reply.txt").write_text(HOSTILE)
    (folder / "screen.txt").write_text(HOSTILE)
    (folder / "prompt.json").write_text(json.dumps([{"role": HOSTILE, "content": HOSTILE}]))
    (folder / "state.json").write_text(json.dumps({"plan": [HOSTILE], "manager_memory": [HOSTILE],
                                                   "current_subgoal": HOSTILE, "step_records": []}))
    lines = (run_dir / "steps.jsonl").read_text().splitlines()
    (run_dir / "steps.jsonl").write_text("\n".join([json.dumps(line), *lines[1:]]) + "\n")
    with (run_dir / "run.log").open("a") as f:
        f.write(json.dumps({"event": "transition", "agent": HOSTILE, "from": HOSTILE, "to": "FAIL", "step": 2,
                            "reason": HOSTILE}) + "\n")
    return run_dir


def test_hostile_text_is_shown_as_text_never_as_markup(tmp_path: Path) -> None:
    page = render_report(_hostile_run(tmp_path))
    found = tags_of(page)
    assert {tag for tag, _ in found} <= TAGS
    assert not [(tag, name) for tag, attrs in found for name, _ in attrs if name.startswith("on")]
    for tag, attrs in found:
        for name, value in attrs:
            if name == "src":
                assert value is not None and value.startswith("data:image/jpeg;base64,"), (tag, value)
            if name == "href":  # a place in the page, or a screenshot of the run, next to the page
                assert value is not None and (value.startswith("#") or RUN_FILE.fullmatch(value)), (tag, value)
    assert "<script" not in page and "\u202e" not in page and "\x1b" not in page and "\x07" not in page
    text = page_text(page.split("<main>", 1)[1])
    assert set("<>\"'&") <= set(text)  # the characters are there, as text
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;") >= 10
    assert "\\u202eevil\\u202c \\x1b]0;title\\x07 &amp;amp;" in page  # controls shown escaped, visibly


def test_the_page_loads_nothing_from_anywhere(tmp_path: Path) -> None:
    page = render_report(make_run(tmp_path))
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"(?i)(src|href)\s*=\s*[\"']?(https?:|//|file:)", page)
    assert not re.search(r"(?i)url\((?!data:)", page) and "@import" not in page and "<script" not in page
    assert not re.search(r"(?i)<link\b", page)


def test_a_failed_run_opens_with_its_reason_and_final_screen(tmp_path: Path) -> None:
    page = render_report(make_run(tmp_path, status="FAIL", reason="no fax app is installed"))
    failure = page.index('id="failure"')
    assert page.index('id="task"') < failure < page.index('id="summary"') < page.index('id="timeline"')
    assert page.index('id="timeline"') < page.index('id="step-1"')
    section = page[failure:page.index("</section>", failure)]
    assert "no fax app is installed" in section and "final.png" in section
    (uri,) = re.findall(r'src="data:image/jpeg;base64,([^"]+)"', section)
    from PIL import Image

    final = Image.open(io.BytesIO(base64.b64decode(uri))).convert("RGB")
    red, green, _ = final.getpixel((final.width // 2, final.height // 2))
    assert red > 150 and green < 80  # the final.png of fake_runs: red


def test_a_finished_run_has_no_failure_section(tmp_path: Path) -> None:
    page = render_report(make_run(tmp_path))
    assert 'id="failure"' not in page and 'id="break"' not in page
    assert 'data-outcome="FINISH"' in page and 'data-steps="2"' in page
    assert page.count('<article class="step"') == 2


def test_an_interrupted_run_shows_where_it_stopped(tmp_path: Path) -> None:
    page = render_report(make_run(tmp_path, status="FAIL", reason="interrupted", signal="SIGINT", interrupted=True))
    assert "stopped by SIGINT" in page
    brk = page.index('id="break"')
    assert brk > page.rindex('<article class="step"')
    assert "interrupted" in page[brk:brk + 300]


def test_the_transitions_have_both_machines_of_reasoning_mode(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=2, mode="reasoning")
    events = [("Manager", 0, "NONE", "CONTINUE", ""), ("Manager", 1, "CONTINUE", "ASSIGN", "open Settings"),
              ("Executor", 0, "NONE", "CONTINUE", ""), ("Executor", 2, "CONTINUE", "FINISH", "opened Settings"),
              ("Manager", 1, "ASSIGN", "CONTINUE", ""), ("Manager", 3, "CONTINUE", "FINISH", "done")]
    (run_dir / "run.log").write_text("".join(json.dumps(
        {"event": "transition", "agent": a, "step": s, "from": f, "to": t, "reason": r}) + "\n"
        for a, s, f, t, r in events) + json.dumps({"event": "model_call", "step": 1}) + "\n")
    page = render_report(run_dir)
    table = page[page.index('<table class="transitions">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr( class=\"[a-z]+\")?>", table)
    assert len(rows) == 1 + len(events) + 1  # the head, every transition, the end
    assert table.count('<tr class="sub">') == 2  # the executor's, indented under the manager
    assert "ASSIGN" in table and "opened Settings" in table and "ended: FINISH" in table
    assert "Mode</th><td>reasoning" in page


def test_codeact_steps_show_their_code(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=1)
    code = 'open_app("Settings")\nfor i in range(2):\n\tclick(index=3)'
    line = step_line(1, agent="CodeActAgent", action={"name": "code", "args": {"code": code}},
                     result={"success": True, "summary": "open_app(...) -> ok\nFinished (no output)."})
    write_step(run_dir, line)
    (run_dir / "steps.jsonl").write_text(json.dumps(line) + "\n")
    page = render_report(run_dir)
    assert '<details class="code" open><summary>Code</summary><pre class="code">' in page
    assert 'open_app(&quot;Settings&quot;)\nfor i in range(2):\n\tclick(index=3)' in page
    assert "code (3 lines of Python, below)" in page


def test_text_in_every_script_gets_an_embedded_font(tmp_path: Path) -> None:
    require_noto()
    words = "Открыть настройки 打开设置 設定を開く 설정 열기 افتح الإعدادات ✓"
    run_dir = make_run(tmp_path, steps=1, task=words)
    page = render_report(run_dir)
    fonts = re.findall(r'src:url\(data:font/woff2;base64,([A-Za-z0-9+/=]+)\) format\("woff2"\)', page)
    covered: set[int] = set()
    for data in fonts:
        with TTFont(io.BytesIO(base64.b64decode(data))) as font:
            covered |= set(font.getBestCmap())
            assert "fvar" not in font  # pinned to the regular weight
    needed = {ord(ch) for _, chars in faces_for(page_text(page.split("<main>", 1)[1])) for ch in chars}
    assert {ord(ch) for ch in words if not ch.isspace()} <= needed <= covered
    assert len(fonts) >= 3  # Latin and Cyrillic, CJK, Arabic
    assert 'id="fonts-note"' not in page
    families = re.search(r"body \{[^}]*font-family: ([^;]+);", page)
    assert families is not None and families.group(1).startswith('"report-font-0", "report-font-1"')


def test_page_text_is_the_shown_text_only() -> None:
    markup = ('<style>.a{content:"Ж"}</style><p class="x&quot;y" data-uri="data:image/png;base64,QUJD">'
              'Wi&#8209;Fi &amp; caf&eacute; 设置</p><script>var z = "λ";</script><img alt="Ω" src="data:,">')
    assert page_text(markup) == "".join(sorted(set("Wi\u2011Fi & café 设置")))


def test_text_no_font_here_draws_is_named_at_the_end_of_the_page(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_font(tmp_path / "fonts", "Noto Sans", "".join(chr(c) for c in range(0x20, 0x250)))
    monkeypatch.setenv(fonts.FONTS_ENV, str(tmp_path / "fonts"))
    fonts.reset()
    try:
        run_dir = make_run(tmp_path, steps=1, task="Открыть 设置")
        notes: list[str] = []
        page = render_report(run_dir, notes=notes)
        (note,) = notes
        assert note.startswith("fonts: no font on this machine draws Chinese/Japanese/Korean (2 characters), "
                               "Cyrillic (6 characters)")  # then the page's own arrows and marks
        assert f'<footer><p id="fonts-note" class="warn">{note}</p></footer>' in page
        out_stream = io.StringIO()
        main(["report", str(run_dir)], out=out_stream)
        out = out_stream.getvalue()
        assert out.rstrip().splitlines()[-2:] == [note, f"report: {run_dir / 'report.html'}"]  # where it is: last
    finally:
        fonts.reset()


def test_a_font_whose_licence_forbids_embedding_is_not_embedded(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    latin = "".join(chr(c) for c in range(0x20, 0x7F))
    write_font(tmp_path / "fonts", "Noto Sans", latin, fs_type=0x0002)  # restricted licence embedding
    write_font(tmp_path / "fonts", "Noto Sans CJK SC", "设置")
    monkeypatch.setenv(fonts.FONTS_ENV, str(tmp_path / "fonts"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fonts.reset()
    try:
        css, families = font_faces_css("Wi-Fi 设置")
        assert len(families) == 1 and css.count("@font-face") == 1  # only the CJK face
        assert not webfonts.embeddable(fonts.face_for("W"))  # type: ignore[arg-type]
        assert webfonts.embeddable(fonts.face_for("设"))  # type: ignore[arg-type]
    finally:
        fonts.reset()


def test_a_turn_of_several_actions_shows_each_outcome_and_the_approval(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=1)
    outcomes = [{"action": "type(index=4, text='milk')", "success": True, "summary": "typed 4 characters", "ran": True},
                {"action": "click(index=9, text='Save')", "success": False, "summary": "control 9 went away",
                 "ran": False}]
    line = step_line(1, action={"name": "type", "args": {"index": 4, "text": "milk"}},
                     result={"success": False, "summary": "..."}) | {
        "outcomes": outcomes, "confirmation": {"approved": False, "note": "not now"}}
    write_step(run_dir, line)
    (run_dir / "steps.jsonl").write_text(json.dumps(line) + "\n")
    page = render_report(run_dir)
    assert "type(index=4, text=&#x27;milk&#x27;)" in page and "control 9 went away" in page
    assert ">not run</span>" in page and "refused by a person: not now" in page


def _failed_badge(page: str) -> str | None:
    found = re.search(r'<span id="actions-failed" class="badge warn" data-failed="(\d+)">([^<]*)</span>', page)
    return f"{found.group(1)}: {found.group(2)}" if found else None


def test_the_header_says_how_many_actions_failed_as_run_json_counted(tmp_path: Path) -> None:
    assert _failed_badge(render_report(make_run(tmp_path, name="two", actions_failed=2))) == "2: 2 actions failed"
    assert _failed_badge(render_report(make_run(tmp_path, name="one", actions_failed=1))) == "1: 1 action failed"
    assert _failed_badge(render_report(make_run(tmp_path, name="none", actions_failed=0))) is None


def test_an_older_run_without_the_count_has_it_counted_from_its_steps(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=4)  # run.json from before actions_failed was kept
    outcomes = [{"action": "click(index=8)", "success": False, "summary": "no control 8", "ran": True},
                {"action": "click(index=3)", "success": False, "summary": "an earlier action failed", "ran": False}]
    lines = [step_line(1, result={"success": False, "summary": "no control 9"}),
             step_line(2, outcomes=outcomes, result={"success": False, "summary": "..."}),
             step_line(3, status="CONFIRM", result=None),  # waiting for approval: counted when it goes on
             step_line(4, status="FINISH", action=None, result=None)]
    for line in lines:
        write_step(run_dir, line)
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert _failed_badge(render_report(run_dir)) == "2: 2 actions failed"
