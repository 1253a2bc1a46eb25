"""App labels from APKs: generated APKs read back, byte budgets, hostile files, independent parsers.

The independent parsers: the standard library's ``zipfile`` (central directory and entry bytes),
apkutils (package, label, version; skipped when not installed) and, when a machine has it, Debian's
``aapt`` (Android's own C++ resource code). The real APK is the one the uiautomator2 wheel ships.
"""

from __future__ import annotations

import io
import random
import re
import shutil
import struct
import subprocess
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.apk import (
    ARSC_LIMIT,
    MANIFEST,
    MANIFEST_LIMIT,
    RESOURCES,
    AppLabel,
    app_label,
    dd_command,
    dd_reader,
    file_reader,
    parse_manifest,
    read_central_directory,
    read_entry,
    resolve_string,
)
from ufo_mobile.errors import ApkError
from ufo_mobile.sim.android.apkgen import APP_NAME_ID, binary_xml, build_apk, manifest_element, zip_archive

LABELS = ["Notes", "设置", "📷 Camera 🎉", "Ünïcödé ✓ Ω", "x" * 200, "設定アプリ" * 40]
NO_DEFAULT = {"fr": "Réglages", "en": "Settings"}
APK = build_apk("com.example.notes", "Notes")


class CountingReader:
    """A ``read_range`` over bytes that records every call and refuses reads outside the file."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.calls: list[tuple[int, int]] = []

    def __call__(self, offset: int, length: int) -> bytes:
        assert 0 <= offset and 0 <= length and offset + length <= len(self.data), (offset, length)
        self.calls.append((offset, length))
        return self.data[offset:offset + length]

    @property
    def bytes_read(self) -> int:
        return sum(length for _, length in self.calls)


def label_of(data: bytes, **kwargs: Any) -> AppLabel:
    return app_label(CountingReader(data), len(data), **kwargs)


def entry_bytes(data: bytes, name: str) -> bytes:
    reader = CountingReader(data)
    return read_entry(reader, read_central_directory(reader, len(data)), name, limit=ARSC_LIMIT)


def one_line_error(call: Callable[[], object]) -> str:
    with pytest.raises(ApkError) as info:
        call()
    message = str(info.value)
    assert message and "\n" not in message and "\r" not in message
    return message


# --- round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("label", LABELS)
@pytest.mark.parametrize("reference", [True, False], ids=["reference", "literal"])
@pytest.mark.parametrize(("manifest_utf8", "arsc_utf8"), [(False, True), (True, False), (True, True), (False, False)])
def test_labels_round_trip_in_every_string_pool_encoding(label: str, reference: bool, manifest_utf8: bool,
                                                         arsc_utf8: bool) -> None:
    data = build_apk("com.example.app", label, 42, "4.2", label_as_reference=reference,
                     manifest_utf8=manifest_utf8, arsc_utf8=arsc_utf8)
    assert label_of(data) == AppLabel("com.example.app", label, 42)


@pytest.mark.parametrize("deflate_manifest", [True, False])
@pytest.mark.parametrize("deflate_arsc", [True, False])
def test_stored_and_deflated_entries_read_alike(deflate_manifest: bool, deflate_arsc: bool) -> None:
    data = build_apk("com.example.notes", "Notes", deflate_manifest=deflate_manifest, deflate_arsc=deflate_arsc)
    methods = {info.filename: info.compress_type for info in zipfile.ZipFile(io.BytesIO(data)).infolist()}
    assert methods[MANIFEST] == (zipfile.ZIP_DEFLATED if deflate_manifest else zipfile.ZIP_STORED)
    assert methods[RESOURCES] == (zipfile.ZIP_DEFLATED if deflate_arsc else zipfile.ZIP_STORED)
    assert label_of(data).label == "Notes"


def test_manifest_fields_reference_label_and_launcher_activity() -> None:
    info = parse_manifest(entry_bytes(build_apk("com.example.notes", "Notes", 2004001, "2.4.0"), MANIFEST))
    assert info.package == "com.example.notes"
    assert (info.version_code, info.version_name) == (2004001, "2.4.0")
    assert (info.label_ref, info.label_text) == (APP_NAME_ID, None)
    assert info.launcher_activities == ("com.example.notes.MainActivity",)


@pytest.mark.parametrize(("activity", "expected"), [
    (".ui.Main", ("com.example.notes.ui.Main",)),
    ("Main", ("com.example.notes.Main",)),
    ("org.other.Start", ("org.other.Start",)),
    (None, ()),
])
def test_launcher_activity_names_are_expanded_as_android_does(activity: str | None, expected: tuple[str, ...]) -> None:
    data = build_apk("com.example.notes", "Notes", launcher_activity=activity)
    assert parse_manifest(entry_bytes(data, MANIFEST)).launcher_activities == expected


def test_a_literal_label_costs_no_resource_table_read() -> None:
    data = build_apk("com.example.plain", "Plain 文字", label_as_reference=False)
    reader = CountingReader(data)
    assert app_label(reader, len(data)).label == "Plain 文字"
    assert len(reader.calls) == 2  # the tail, the manifest


def test_an_element_without_attributes_may_declare_any_attribute_size() -> None:
    axml = entry_bytes(APK, MANIFEST)
    empty = struct.pack("<HHHHHH", 20, 20, 0, 0, 0, 0)  # <intent-filter>: start, size, count 0, no id/class/style
    assert axml.count(empty) == 1
    info = parse_manifest(axml.replace(empty, struct.pack("<HHHHHH", 20, 0, 0, 0, 0, 0)))
    assert info.launcher_activities == ("com.example.notes.MainActivity",)


def test_an_app_without_a_label_is_shown_by_its_package_name() -> None:
    element = manifest_element("com.example.bare", (0x03, "unused"), 3, "3", None)
    del element.children[1].attrs["android:label"]
    data = zip_archive([(MANIFEST, binary_xml(element), True)])
    assert label_of(data) == AppLabel("com.example.bare", "com.example.bare", 3)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_the_default_configuration_wins_over_every_locale(sparse: bool) -> None:
    data = build_apk("com.example.loc", "Default", labels_by_locale={"fr": "Réglages", "en": "Settings"}, sparse=sparse)
    assert label_of(data).label == "Default"
    assert label_of(data, prefer_locale="fr").label == "Default"


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize(("prefer", "expected"), [("en", "Settings"), ("fr", "Réglages"), ("fr-FR", "Réglages"),
                                                  ("de", "Réglages")])
def test_without_a_default_the_preferred_locale_wins_else_the_first(sparse: bool, prefer: str, expected: str) -> None:
    data = build_apk("com.example.loc", None, labels_by_locale=NO_DEFAULT, sparse=sparse)
    assert label_of(data, prefer_locale=prefer).label == expected


@pytest.mark.parametrize(("prefer", "expected"), [("en", "Color"), ("en-GB", "Colour"), ("en_GB", "Colour"),
                                                  ("en-rGB", "Colour"), ("en-US", "Color"), ("fil", "Kulay")])
def test_regions_and_three_letter_languages(prefer: str, expected: str) -> None:
    locales = {"fil": "Kulay", "en-rGB": "Colour", "en": "Color", "en-AU": "Colour (AU)"}
    arsc = entry_bytes(build_apk("com.example.paint", None, labels_by_locale=locales), RESOURCES)
    assert resolve_string(arsc, APP_NAME_ID, prefer) == expected


# --- how little is read -----------------------------------------------------------------------

def test_a_huge_apk_costs_three_small_reads() -> None:
    data = build_apk("com.example.huge", "Huge", dex_size=64 * 1024 * 1024)
    dex = zipfile.ZipFile(io.BytesIO(data)).getinfo("classes.dex")
    dex_start = dex.header_offset + 30 + len(dex.filename) + len(dex.extra)
    dex_end = dex_start + dex.compress_size
    reader = CountingReader(data)
    assert app_label(reader, len(data)) == AppLabel("com.example.huge", "Huge", 1)
    assert len(reader.calls) == 3  # the tail (with the central directory), the manifest, the resource table
    assert reader.bytes_read < 80 * 1024, reader.calls
    of_the_code = sum(max(0, min(o + n, dex_end) - max(o, dex_start)) for o, n in reader.calls)
    assert of_the_code <= 64 * 1024  # only where the 64 KiB tail read overlaps the code's last bytes


def test_a_central_directory_larger_than_the_tail_is_read_once_more() -> None:
    names = [(f"res/raw/file_{i:05d}_{'n' * 40}.bin", b"", False) for i in range(1500)]
    base = zipfile.ZipFile(io.BytesIO(build_apk("com.example.many", "Many")))
    data = zip_archive([(i.filename, base.read(i), i.compress_type == 8) for i in base.infolist()] + names)
    reader = CountingReader(data)
    assert app_label(reader, len(data)).label == "Many"
    assert len(reader.calls) == 4


def test_dd_command_reads_whole_blocks_and_says_what_to_drop() -> None:
    assert dd_command("/data/app/~~a==/com.x-1/base.apk", 5000, 100) == (
        "dd if='/data/app/~~a==/com.x-1/base.apk' bs=4096 skip=1 count=1 2>/dev/null", 904)
    assert dd_command("/x y/base.apk", 4000, 200) == ("dd if='/x y/base.apk' bs=4096 skip=0 count=2 2>/dev/null", 4000)
    assert dd_command("/a.apk", 8192, 4096, block=512) == ("dd if=/a.apk bs=512 skip=16 count=8 2>/dev/null", 0)


@pytest.mark.skipif(shutil.which("dd") is None, reason="no dd on this machine")
def test_dd_reader_through_a_real_dd_and_shell(tmp_path: Path) -> None:
    path = tmp_path / "we ird 'name'.apk"
    data = build_apk("com.example.dd", "Über dd", dex_size=300_000)
    path.write_bytes(data)
    commands: list[str] = []

    def run(command: str) -> bytes:
        commands.append(command)
        return subprocess.run(["sh", "-c", command], capture_output=True, check=True, timeout=60).stdout

    assert app_label(dd_reader(run, str(path)), len(data)) == app_label(file_reader(path), len(data))
    assert app_label(dd_reader(run, str(path)), len(data)).label == "Über dd"
    assert all(command.startswith("dd if=") for command in commands)


# --- hostile files ----------------------------------------------------------------------------

def central_record(data: bytes, name: str) -> int:
    for match in re.finditer(rb"PK\x01\x02", data):
        start = match.start()
        length = struct.unpack_from("<H", data, start + 28)[0]
        if data[start + 46:start + 46 + length] == name.encode():
            return start
    raise AssertionError(f"no central record for {name}")


def patched(data: bytes, at: int, fmt: str, *values: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, *values)
    return bytes(out)


def patch_entry(data: bytes, name: str, fmt: str, central_at: int, local_at: int | None, *values: int) -> bytes:
    """Patch a field of ``name``'s central record and (when ``local_at`` is given) of its local header."""
    record = central_record(data, name)
    data = patched(data, record + central_at, fmt, *values)
    if local_at is not None:
        local = struct.unpack_from("<I", data, record + 42)[0]
        data = patched(data, local + local_at, fmt, *values)
    return data


def eocd(data: bytes) -> int:
    return data.rindex(b"PK\x05\x06")


STORED_ARSC = zipfile.ZipFile(io.BytesIO(APK)).getinfo(RESOURCES)
HOSTILE: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "0 bytes is too short"),
    "not a zip": (b"<manifest package='x'/>" * 20, "no end of central directory record"),
    "truncated": (APK[:len(APK) // 2], "no end of central directory record"),
    "cut at the end record": (APK[:-5], "no end of central directory record"),
    "end record magic": (patched(APK, eocd(APK), "<I", 0x06054B51), "no end of central directory record"),
    "central directory past its end": (patched(APK, eocd(APK) + 16, "<I", len(APK)), "overruns the end record"),
    "more entries than records": (patched(APK, eocd(APK) + 8, "<HH", 9, 9), "cannot hold 9 entries"),
    "central record magic": (patched(APK, central_record(APK, MANIFEST), "<I", 0x02014B51),
                             "bad central directory record 0"),
    "local header magic": (patched(APK, 0, "<I", 0x04034B51), "bad local header for AndroidManifest.xml"),
    "local header disagrees": (patched(APK, 14, "<I", 0xDEADBEEF), "disagree with the central directory"),
    "entry past the data": (patch_entry(APK, MANIFEST, "<I", 42, None, len(APK)), "past the entry data"),
    "size smaller than it inflates": (patch_entry(APK, MANIFEST, "<I", 24, 22, 100), "inflates past its declared 100"),
    "size larger than it inflates": (patch_entry(APK, MANIFEST, "<I", 24, 22, 5000), "not the declared 5000"),
    "size over the limit": (patch_entry(APK, MANIFEST, "<I", 24, 22, MANIFEST_LIMIT + 1), "over the limit"),
    "compressed size past the directory": (patch_entry(APK, MANIFEST, "<I", 20, 18, 1_000_000),
                                           "overruns the central directory"),
    "compressed size cut": (patch_entry(APK, MANIFEST, "<I", 20, 18, 100), "truncated deflate stream"),
    "stored sizes differ": (patch_entry(APK, RESOURCES, "<I", 24, 22, STORED_ARSC.file_size - 4),
                            f"holds {STORED_ARSC.file_size} bytes but declares {STORED_ARSC.file_size - 4}"),
    "crc": (patched(APK, STORED_ARSC.header_offset + 30 + 14 + len(STORED_ARSC.extra) + 100, "<B", 0x55),
            "fails its CRC check"),
    "corrupt deflate data": (patched(APK, 30 + len(MANIFEST), "<I", 0xFFFFFFFF), "corrupt deflate data"),
    "encrypted": (patch_entry(APK, MANIFEST, "<H", 8, 6, 0x0801), "is encrypted"),
    "bzip2": (patch_entry(APK, MANIFEST, "<H", 10, 8, 12), "compression method 12"),
    "zip64 end record": (patched(APK, eocd(APK) + 8, "<HH", 0xFFFF, 0xFFFF), "zip64 archives are not supported"),
    "zip64 entry": (patch_entry(APK, MANIFEST, "<I", 20, None, 0xFFFFFFFF), "zip64 entry AndroidManifest.xml"),
    "duplicate": (zip_archive([(MANIFEST, b"a", False), (MANIFEST, b"b", False)]), "duplicate entry"),
    "no manifest": (zip_archive([("classes.dex", b"dex\n035\0", False)]), "AndroidManifest.xml is missing"),
    "no resource table": (zip_archive([(MANIFEST, entry_bytes(APK, MANIFEST), True)]), "resources.arsc is missing"),
    "text manifest": (zip_archive([(MANIFEST, b"<?xml version='1.0'?><manifest/>", True)]),
                      "not in Android's binary format"),
    "garbage table": (zip_archive([(MANIFEST, entry_bytes(APK, MANIFEST), True), (RESOURCES, b"\x03\x00" * 64, False)]),
                      "resources.arsc: not in Android's binary format"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_files_give_one_line_apk_errors(name: str) -> None:
    data, expected = HOSTILE[name]
    message = one_line_error(lambda: label_of(data))
    assert expected in message, message


def deflate_bomb(mib: int) -> bytes:
    """A raw deflate stream of ``mib`` MiB of zeros in about ``mib`` KB: one fully flushed 1 MiB run,
    repeated (each copy starts afresh), then a final empty block."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return (packer.compress(bytes(1 << 20)) + packer.flush(zlib.Z_FULL_FLUSH)) * mib + b"\x03\x00"


def test_a_deflate_bomb_is_cut_off_at_its_declared_size() -> None:
    stored = zip_archive([(MANIFEST, deflate_bomb(1024), False)])  # 1 GiB of zeros in about 1 MB
    bomb = patch_entry(stored, MANIFEST, "<H", 10, 8, 8)  # now deflated
    lying = patch_entry(bomb, MANIFEST, "<I", 24, 22, 4096)
    tracemalloc.start()
    try:
        assert "inflates past its declared 4096 bytes" in one_line_error(lambda: label_of(lying))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, peak  # the bomb's compressed MB, never its inflated GB
    honest = CountingReader(patch_entry(bomb, MANIFEST, "<I", 24, 22, 1 << 30))
    assert "declares 1073741824 bytes, over the limit of 4194304" in one_line_error(
        lambda: app_label(honest, len(honest.data)))
    assert len(honest.calls) == 1  # the tail only: nothing of the bomb is read, let alone inflated


def test_a_reference_loop_in_the_table_is_bounded() -> None:
    arsc = entry_bytes(build_apk("com.example.loop", "Loop"), RESOURCES)
    value = struct.pack("<HBBI", 8, 0, 0x03, 3)  # app_name's value: string 3 of the global pool ("Loop")
    assert arsc.count(value) == 1
    looped = arsc.replace(value, struct.pack("<HBBI", 8, 0, 0x01, APP_NAME_ID))
    assert "chain of over 8 references" in one_line_error(lambda: resolve_string(looped, APP_NAME_ID))


@pytest.mark.parametrize(("res_id", "expected"), [
    (0x0104000B, "no package 0x01 for resource 0x0104000b (a framework resource)"),
    (0x7F02FFFF, "resource 0x7f02ffff is not defined"),
    (0x7F090000, "resource 0x7f090000 is not defined"),
])
def test_unresolvable_ids_say_which(res_id: int, expected: str) -> None:
    arsc = entry_bytes(APK, RESOURCES)
    assert expected in one_line_error(lambda: resolve_string(arsc, res_id))


def test_every_truncation_of_the_manifest_and_table_is_an_apk_error() -> None:
    for blob, parse in ((entry_bytes(APK, MANIFEST), parse_manifest),
                        (entry_bytes(APK, RESOURCES), lambda b: resolve_string(b, APP_NAME_ID))):
        for cut in range(len(blob)):
            one_line_error(lambda: parse(blob[:cut]))  # noqa: B023 - called at once


@pytest.mark.parametrize("target", ["manifest", "table", "archive"])
def test_random_corruption_never_escapes_as_another_exception(target: str) -> None:
    data = build_apk("com.example.fuzz", "Fuzz 🎉", labels_by_locale={"fr": "Flou"}, deflate_manifest=False)
    blob = {"manifest": entry_bytes(data, MANIFEST), "table": entry_bytes(data, RESOURCES), "archive": data}[target]
    parse: Callable[[bytes], object] = {
        "manifest": parse_manifest,
        "table": lambda b: resolve_string(b, APP_NAME_ID),
        "archive": lambda b: app_label(CountingReader(b), len(b)),
    }[target]
    rng = random.Random(f"apk-{target}")
    for _ in range(400):
        mutated = bytearray(blob)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        try:
            parse(bytes(mutated))
        except ApkError as exc:
            assert "\n" not in str(exc)


# --- independent parsers ----------------------------------------------------------------------

def u2_apk() -> Path:
    uiautomator2 = pytest.importorskip("uiautomator2", reason="the uiautomator2 wheel ships the real APK")
    path = Path(uiautomator2.__file__).parent / "assets" / "app-uiautomator.apk"
    if not path.is_file():
        pytest.skip(f"the uiautomator2 wheel has no {path.name}")
    return path


def sample_apks() -> dict[str, bytes]:
    return {
        "reference": build_apk("com.example.notes", "Notes", 12, "1.2"),
        "literal": build_apk("com.example.plain", "Plain ✓", label_as_reference=False),
        "cjk-utf16-table": build_apk("com.example.cjk", "设置" * 30, arsc_utf8=False, manifest_utf8=True),
        "emoji-locales": build_apk("com.example.emoji", "📷 Camera", labels_by_locale={"fr": "📷 Appareil"}),
    }


def test_the_real_apk_central_directory_and_entries_match_zipfile() -> None:
    path = u2_apk()
    reader = file_reader(path)
    directory = read_central_directory(reader, path.stat().st_size)
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        assert list(directory.entries) == [info.filename for info in infos]
        for info in infos:
            entry = directory.entries[info.filename]
            assert (entry.size, entry.compressed_size, entry.crc32, entry.header_offset) == (
                info.file_size, info.compress_size, info.CRC, info.header_offset)
            if info.file_size <= 1024 * 1024:
                assert read_entry(reader, directory, info.filename, limit=1024 * 1024) == archive.read(info)


def test_the_real_apk_label() -> None:
    path = u2_apk()
    found = app_label(file_reader(path), path.stat().st_size)
    assert re.fullmatch(r"[a-z][\w.]+", found.package) and found.label and found.version_code > 0
    manifest = parse_manifest(entry_bytes(path.read_bytes(), MANIFEST))
    assert manifest.label_ref is not None and manifest.launcher_activities


def apkutils_view(apk: Any) -> tuple[str, str, str, str]:
    """Package, label, version code and name as apkutils reads them (the code from its manifest XML)."""
    version_code = re.search(r'android:versionCode="([^"]*)"', apk.get_manifest())
    return apk.package_name, apk.app_name, version_code.group(1) if version_code else "", apk.version_name


def test_the_real_apk_agrees_with_apkutils() -> None:
    path = u2_apk()
    apkutils = pytest.importorskip("apkutils", reason="apkutils (the test extra) is not installed")
    theirs = apkutils.APK.from_file(str(path), strict=True).parse_resource()
    ours = app_label(file_reader(path), path.stat().st_size)
    version_name = parse_manifest(entry_bytes(path.read_bytes(), MANIFEST)).version_name
    assert (ours.package, ours.label, str(ours.version_code), version_name) == apkutils_view(theirs)


@pytest.mark.parametrize("name", list(sample_apks()))
def test_generated_apks_agree_with_apkutils_and_zipfile(name: str) -> None:
    data = sample_apks()[name]
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None
    apkutils = pytest.importorskip("apkutils", reason="apkutils (the test extra) is not installed")
    theirs = apkutils.APK.from_bytes(data, strict=True).parse_resource()
    ours = label_of(data)
    manifest = parse_manifest(entry_bytes(data, MANIFEST))
    assert (ours.package, ours.label, str(ours.version_code), manifest.version_name) == apkutils_view(theirs)
    assert list(manifest.launcher_activities) == theirs.get_manifest_main_activities()


@pytest.mark.skipif(shutil.which("aapt") is None, reason="Android's aapt is not installed (Debian package aapt)")
@pytest.mark.parametrize("name", list(sample_apks()))
def test_generated_apks_agree_with_android_aapt(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.apk"
    path.write_bytes(sample_apks()[name])
    out = subprocess.run(["aapt", "dump", "badging", str(path)], capture_output=True, check=True, timeout=60,
                         text=True).stdout
    package = re.search(r"^package: name='([^']*)' versionCode='(\d+)'", out, re.M)
    label = re.search(r"^application-label:'(.*)'$", out, re.M)
    assert package and label, out
    ours = label_of(path.read_bytes())
    assert (ours.package, str(ours.version_code), ours.label) == (package.group(1), package.group(2), label.group(1))
