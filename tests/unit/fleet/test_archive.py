"""A run directory sent back from a Ray worker: packed, unpacked safely, never half there."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from ufo_mobile.errors import RunWriteError
from ufo_mobile.fleet.archive import pack, unpack


def make_run(root: Path, name: str = "t01-wifi-a1") -> Path:
    run = root / name
    (run / "steps" / "0001").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"run_id": name, "status": "FINISH", "run_dir": "/tmp/worker/" + name}))
    (run / "steps.jsonl").write_text('{"step": 1}\n')
    (run / "steps" / "0001" / "screenshot.png").write_bytes(b"\x89PNG" + bytes(range(256)))
    (run / "run.lock").write_text("123\n")  # the writer's own files stay behind
    (run / ".reserve").write_bytes(b"\0" * 10)
    return run


def test_a_run_comes_back_whole_and_says_where_it_is(tmp_path: Path) -> None:
    data = pack(make_run(tmp_path / "worker"))
    logs = tmp_path / "logs"
    logs.mkdir()
    landed = unpack(data, logs, "t01-wifi-a1")
    assert landed == logs / "t01-wifi-a1"
    assert sorted(str(p.relative_to(landed)) for p in landed.rglob("*")) == [
        "run.json", "steps", "steps.jsonl", "steps/0001", "steps/0001/screenshot.png"]
    assert (landed / "steps" / "0001" / "screenshot.png").read_bytes() == b"\x89PNG" + bytes(range(256))
    assert json.loads((landed / "run.json").read_text())["run_dir"] == str(landed)
    assert [p.name for p in logs.iterdir()] == ["t01-wifi-a1"]  # no leftovers


def test_a_taken_name_gets_the_next_free_one(tmp_path: Path) -> None:
    data = pack(make_run(tmp_path / "worker"))
    logs = tmp_path / "logs"
    (logs / "t01-wifi-a1").mkdir(parents=True)
    assert unpack(data, logs, "t01-wifi-a1") == logs / "t01-wifi-a1-2"


def hostile(members: dict[str, bytes], *, link: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        if link is not None:
            info = tarfile.TarInfo("run/evil")
            info.type, info.linkname = tarfile.SYMTYPE, link
            tar.addfile(info)
    return buffer.getvalue()


@pytest.mark.parametrize("data", [
    hostile({"run/../../escape.txt": b"x"}),
    hostile({"other/run.json": b"{}"}),
    hostile({"run/run.json": b"{}"}, link="/etc/passwd"),
    b"not a tar at all",
])
def test_an_archive_that_is_not_that_run_is_refused_and_leaves_nothing(tmp_path: Path, data: bytes) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    with pytest.raises(RunWriteError):
        unpack(data, logs, "run")
    assert list(logs.iterdir()) == [] and not (tmp_path / "escape.txt").exists()
