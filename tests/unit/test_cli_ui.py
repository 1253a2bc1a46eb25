"""``python -m ufo_mobile ui``: what the model sees on a screen."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from tests.fonts import write_font
from ufo_mobile.cli import main
from ufo_mobile.core.ui import fonts

DUMPS = Path(__file__).resolve().parents[3] / "shared" / "data" / "ui_dumps"


def need(name: str) -> Path:
    path = DUMPS / name
    if not path.exists():
        pytest.skip(f"real UI dumps not found at {DUMPS} (they live in ../shared/data/ui_dumps)")
    return path


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


def test_prints_the_indexed_text_and_annotates_the_real_screenshot(tmp_path: Path) -> None:
    dump, shot = need("hksmartcompanion__home_current.xml"), need("hksmartcompanion__home_current.png")
    code, out = run("ui", str(dump), "--screenshot", str(shot), "--annotate", str(tmp_path / "a.png"))
    assert code == 0
    assert out.startswith("App com.google.android.permissioncontroller, screen 1080x2400 px")
    assert '7 Button "Don’t allow" click @540,1804' in out  # the centre of [133,1752,947,1857]
    with Image.open(tmp_path / "a.png") as image, Image.open(shot) as original:
        assert image.size == original.size
        assert image.tobytes() != original.convert(image.mode).tobytes()


def test_json_and_a_rendered_wireframe_when_there_is_no_screenshot(tmp_path: Path) -> None:
    dump = need("ask-amo__window_dump.xml")
    code, out = run("ui", str(dump), "--json", "--annotate", str(tmp_path / "w.png"))
    assert code == 0
    data = json.loads(out)
    assert data["phone_state"]["screen_size"] == [1080, 2178]
    assert [c["index"] for c in data["controls"]] == list(range(1, len(data["controls"]) + 1))
    with Image.open(tmp_path / "w.png") as image:
        assert image.size == (1080, 2178)


def test_reads_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    dump = need("hksmartcompanion__home_current.xml")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(dump.read_bytes()), encoding="utf-8"))
    code, out = run("ui", "-")
    assert code == 0 and "Don’t allow" in out


@pytest.mark.parametrize(("content", "message"), [
    ('<hierarchy rotation="0"/>', "empty hierarchy"),
    ("<hierarchy><node bounds=", "dump.xml: "),
])
def test_bad_dumps_exit_2_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str,
                                          message: str) -> None:
    bad = tmp_path / "dump.xml"
    bad.write_text(content)
    code, _ = run("ui", str(bad))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error: {bad}: ") and message in err


def test_missing_file_and_bad_screenshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("ui", str(tmp_path / "nope.xml"))[0] == 2
    assert "cannot read the dump" in capsys.readouterr().err
    dump = need("hksmartcompanion__home_current.xml")
    (tmp_path / "s.png").write_bytes(b"not a png")
    assert run("ui", str(dump), "--screenshot", str(tmp_path / "s.png"))[0] == 2
    assert "s.png: the screenshot is not a PNG image" in capsys.readouterr().err


def test_the_wireframe_says_which_scripts_no_font_here_draws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    write_font(tmp_path / "fonts", "Noto Sans", "".join(chr(c) for c in range(0x20, 0x7F)))
    monkeypatch.setenv(fonts.FONTS_ENV, str(tmp_path / "fonts"))
    fonts.reset()
    dump = tmp_path / "dump.xml"
    dump.write_text('<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="p" '
                    'bounds="[0,0][1080,2400]"><node class="android.widget.Button" package="p" clickable="true" '
                    'text="Wi-Fi 设置" bounds="[40,200][1040,400]"/></node></hierarchy>', encoding="utf-8")
    try:
        assert run("ui", str(dump), "--annotate", str(tmp_path / "w.png"))[0] == 0
        err = capsys.readouterr().err.splitlines()
        assert err[0] == f"annotated screenshot: {tmp_path / 'w.png'}"
        assert err[1].startswith("fonts: no font on this machine draws Chinese/Japanese/Korean (2 characters): ")
        (tmp_path / "fonts" / "cjk").mkdir()
        write_font(tmp_path / "fonts" / "cjk", "Noto Sans CJK SC", "设置")
        fonts.reset()
        assert run("ui", str(dump), "--annotate", str(tmp_path / "w.png"))[0] == 0
        assert capsys.readouterr().err.splitlines() == [f"annotated screenshot: {tmp_path / 'w.png'}"]
    finally:
        fonts.reset()
