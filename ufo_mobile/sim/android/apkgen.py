"""Small, real APKs for the emulated phone: a zip with a binary manifest and a resource table.

What aapt2 writes for a modern app, minus the code: ``AndroidManifest.xml`` in binary XML (UTF-16
string pool by default, as aapt2 writes manifests) with a package, versions, an ``android:label`` (a
``@string/app_name`` reference or literal text), an icon and one launcher activity;
``resources.arsc`` with a UTF-8 global string pool (as aapt2 writes tables), ``drawable`` and
``string`` types, the default configuration and one per extra locale; a ``classes.dex`` of any size
(stored, so a 100 MB APK builds fast) that stands for the code a label reader must not read.
Stored entries are 4-byte aligned through an alignment extra field, as zipalign and apksigner do.
Real tools read these files: ``aapt dump badging`` and apkutils agree with ufo_mobile's reader.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

ANDROID_NS = "http://schemas.android.com/apk/res/android"
ICON_ID, APP_NAME_ID = 0x7F010000, 0x7F020001
_ATTR_IDS = {
    "label": 0x01010001, "icon": 0x01010002, "name": 0x01010003, "exported": 0x01010010,
    "minSdkVersion": 0x0101020C, "versionCode": 0x0101021B, "versionName": 0x0101021C,
    "targetSdkVersion": 0x01010270,
}
_STRING, _REFERENCE, _INT_DEC, _BOOLEAN = 0x03, 0x01, 0x10, 0x12
_NONE = 0xFFFFFFFF
_DOS_TIME, _DOS_DATE = 0x0821, 0x0221  # 1981-01-01 01:01:02, the fixed time of reproducible builds
_LOCALE = re.compile(r"([a-z]{2,3})(?:[-_]r?([A-Z]{2}|[0-9]{3}))?")


def _chunk(ctype: int, header: bytes, body: bytes) -> bytes:
    size = 8 + len(header)
    return struct.pack("<HHI", ctype, size, size + len(body)) + header + body


def _len8(n: int) -> bytes:
    if n >= 0x8000:
        raise ValueError(f"string of {n} units is too long for a UTF-8 pool")
    return bytes([n]) if n < 0x80 else bytes([0x80 | n >> 8, n & 0xFF])


def _len16(n: int) -> bytes:
    return struct.pack("<H", n) if n < 0x8000 else struct.pack("<HH", 0x8000 | n >> 16, n & 0xFFFF)


def string_pool(strings: Sequence[str], *, utf8: bool) -> bytes:
    """A ``ResStringPool`` chunk (no styles)."""
    offsets, data = [], bytearray()
    for text in strings:
        offsets.append(len(data))
        units = len(text.encode("utf-16-le")) // 2
        if utf8:
            raw = text.encode("utf-8")
            data += _len8(units) + _len8(len(raw)) + raw + b"\0"
        else:
            data += _len16(units) + text.encode("utf-16-le") + b"\0\0"
    data += b"\0" * (-len(data) % 4)
    header = struct.pack("<IIIII", len(strings), 0, 0x100 if utf8 else 0, 28 + 4 * len(strings), 0)
    return _chunk(0x0001, header, struct.pack(f"<{len(offsets)}I", *offsets) + bytes(data))


# --- binary XML -------------------------------------------------------------------------------

Typed = tuple[int, int | str]  # (Res_value type, data); data is the text for _STRING


@dataclass
class Element:
    """An element: ``attrs`` maps a name (``android:``-prefixed or bare) to a typed value."""

    tag: str
    attrs: dict[str, Typed] = field(default_factory=dict)
    children: list[Element] = field(default_factory=list)


class _Strings:
    def __init__(self, first: Sequence[str]) -> None:
        self.items: list[str] = list(first)
        self.index = {s: i for i, s in enumerate(self.items)}

    def __call__(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.items)
            self.items.append(text)
        return self.index[text]


def _attr_order(name: str) -> tuple[int, str]:
    local = name.removeprefix("android:")
    return (_ATTR_IDS[local], "") if name.startswith("android:") else (1 << 32, name)


def binary_xml(root: Element, *, utf8: bool = False) -> bytes:
    """An AXML document: string pool (attribute names with resource ids first), resource map, tree."""
    names: set[str] = set()
    stack = [root]
    while stack:
        element = stack.pop()
        names.update(n.removeprefix("android:") for n in element.attrs if n.startswith("android:"))
        stack.extend(element.children)
    with_ids = sorted(names, key=lambda n: _ATTR_IDS[n])
    strings = _Strings(with_ids)
    prefix, uri = strings("android"), strings(ANDROID_NS)
    body = bytearray(_chunk(0x0100, struct.pack("<II", 1, _NONE), struct.pack("<II", prefix, uri)))
    line = [1]

    def emit(element: Element) -> None:
        line[0] += 1
        attrs = bytearray()
        ordered = sorted(element.attrs.items(), key=lambda item: _attr_order(item[0]))
        for name, (vtype, data) in ordered:
            ns = uri if name.startswith("android:") else _NONE
            key = strings(name.removeprefix("android:"))
            raw = strings(data) if isinstance(data, str) else _NONE
            value = raw if isinstance(data, str) else data & 0xFFFFFFFF
            attrs += struct.pack("<IIIHBBI", ns, key, raw, 8, 0, vtype, value)
        tag = strings(element.tag)
        ext = struct.pack("<IIHHHHHH", _NONE, tag, 20, 20, len(ordered), 0, 0, 0)
        body.extend(_chunk(0x0102, struct.pack("<II", line[0], _NONE), ext + attrs))
        for child in element.children:
            emit(child)
        body.extend(_chunk(0x0103, struct.pack("<II", line[0], _NONE), struct.pack("<II", _NONE, tag)))

    emit(root)
    body += _chunk(0x0101, struct.pack("<II", line[0], _NONE), struct.pack("<II", prefix, uri))
    resource_map = _chunk(0x0180, b"", struct.pack(f"<{len(with_ids)}I", *(_ATTR_IDS[n] for n in with_ids)))
    return _chunk(0x0003, b"", string_pool(strings.items, utf8=utf8) + resource_map + bytes(body))


def manifest_element(package: str, label: Typed, version_code: int, version_name: str,
                     launcher_activity: str | None) -> Element:
    application = Element("application", {"android:label": label, "android:icon": (_REFERENCE, ICON_ID)})
    if launcher_activity is not None:
        intent = Element("intent-filter", children=[
            Element("action", {"android:name": (_STRING, "android.intent.action.MAIN")}),
            Element("category", {"android:name": (_STRING, "android.intent.category.LAUNCHER")}),
        ])
        application.children.append(Element("activity", {
            "android:name": (_STRING, launcher_activity), "android:exported": (_BOOLEAN, _NONE),
        }, [intent]))
    return Element("manifest", {
        "package": (_STRING, package), "android:versionCode": (_INT_DEC, version_code),
        "android:versionName": (_STRING, version_name),
    }, [Element("uses-sdk", {"android:minSdkVersion": (_INT_DEC, 21), "android:targetSdkVersion": (_INT_DEC, 34)}),
        application])


# --- resource table ---------------------------------------------------------------------------

def _pack_code(code: str, base: str) -> bytes:
    if not code:
        return b"\0\0"
    if len(code) == 2:
        return code.encode("ascii")
    first, second, third = (ord(c) - ord(base) for c in code)
    return bytes([0x80 | third << 2 | second >> 3, (second << 5 | first) & 0xFF])


def config(locale: str = "") -> bytes:
    """A 64-byte ``ResTable_config``: all zero (the default) but for an optional locale."""
    language = region = ""
    if locale:
        match = _LOCALE.fullmatch(locale)
        if match is None:
            raise ValueError(f"bad locale {locale!r} (use en, fr, en-GB, en-rGB, fil)")
        language, region = match.group(1), match.group(2) or ""
    return struct.pack("<II", 64, 0) + _pack_code(language, "a") + _pack_code(region, "0") + bytes(52)


def _type_chunk(type_id: int, count: int, cfg: bytes, entries: Mapping[int, tuple[int, int]], sparse: bool) -> bytes:
    """One configuration of one type; ``entries`` maps entry index to (key index, value string index)."""
    data = bytearray()
    offsets: dict[int, int] = {}
    for index in sorted(entries):
        key, value = entries[index]
        offsets[index] = len(data)
        data += struct.pack("<HHI", 8, 0, key) + struct.pack("<HBBI", 8, 0, _STRING, value)
    if sparse:
        table = b"".join(struct.pack("<HH", i, offsets[i] // 4) for i in sorted(offsets))
        count = len(offsets)
    else:
        table = b"".join(struct.pack("<I", offsets.get(i, _NONE)) for i in range(count))
    header_size = 20 + len(cfg)
    header = struct.pack("<BBHII", type_id, 1 if sparse else 0, 0, count, header_size + len(table)) + cfg
    return _chunk(0x0201, header, table + bytes(data))


def resources_arsc(package: str, labels: Mapping[str, str], *, utf8: bool = True, sparse: bool = False) -> bytes:
    """A table for ``package`` (id 0x7f): ``drawable/ic_launcher`` (0x7f010000) and three strings of
    which ``app_name`` (0x7f020001) has one value per key of ``labels`` ("" is the default config)."""
    values = _Strings(["res/drawable/ic_launcher.png", "Settings", "Hello"])
    type_names, keys = ["drawable", "string"], ["ic_launcher", "action_settings", "app_name", "hello"]
    body = bytearray(_chunk(0x0202, struct.pack("<BBHI", 1, 0, 1, 1), struct.pack("<I", 0)))
    body += _type_chunk(1, 1, config(), {0: (0, 0)}, False)
    locale_flag = 0x0004 if any(labels) else 0
    body += _chunk(0x0202, struct.pack("<BBHI", 2, 0, len(labels) + ("" not in labels), 3),
                   struct.pack("<III", 0, locale_flag, 0))
    defaults = {0: (1, 1), 2: (3, 2)}
    if "" in labels:
        defaults[1] = (2, values(labels[""]))
    body += _type_chunk(2, 3, config(), defaults, False)
    for locale, text in labels.items():
        if locale:
            body += _type_chunk(2, 3, config(locale), {1: (2, values(text))}, sparse)
    name = package.encode("utf-16-le")[:254].ljust(256, b"\0")
    type_pool, key_pool = string_pool(type_names, utf8=False), string_pool(keys, utf8=True)
    header = struct.pack("<I", 0x7F) + name + struct.pack("<IIIII", 288, len(type_names), 288 + len(type_pool),
                                                          len(keys), 0)
    package_chunk = _chunk(0x0200, header, type_pool + key_pool + bytes(body))
    return _chunk(0x0002, struct.pack("<I", 1), string_pool(values.items, utf8=utf8) + package_chunk)


# --- zip --------------------------------------------------------------------------------------

def zip_archive(entries: Sequence[tuple[str, bytes, bool]]) -> bytes:
    """A zip of ``(name, data, deflate)`` entries, stored ones 4-byte aligned."""
    out, central = bytearray(), bytearray()
    for name, data, deflate in entries:
        raw_name, crc = name.encode("utf-8"), zlib.crc32(data)
        if deflate:
            packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
            body, method, extra = packer.compress(data) + packer.flush(), 8, b""
        else:
            pad = -(len(out) + 30 + len(raw_name) + 6) % 4
            body, method, extra = data, 0, struct.pack("<HHH", 0xD935, 2 + pad, 4) + bytes(pad)
        fields = (20, 0x0800, method, _DOS_TIME, _DOS_DATE, crc, len(body), len(data), len(raw_name))
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0, 0, len(out)) + raw_name
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields, len(extra)) + raw_name + extra + body
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(out), 0)
    return bytes(out + central + end)


def _png() -> bytes:
    def part(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    pixels = zlib.compress(b"\0\x3d\xdc\x84")  # one row: filter byte, one green RGB pixel
    return b"\x89PNG\r\n\x1a\n" + part(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + part(
        b"IDAT", pixels) + part(b"IEND", b"")


def build_apk(package: str, label: str | None, version_code: int = 1, version_name: str = "1.0",
              labels_by_locale: Mapping[str, str] | None = None, label_as_reference: bool = True, *,
              dex_size: int = 4096, deflate_manifest: bool = True, deflate_arsc: bool = False,
              manifest_utf8: bool = False, arsc_utf8: bool = True, sparse: bool = False,
              launcher_activity: str | None = ".MainActivity") -> bytes:
    """The bytes of an APK whose launcher label is ``label``.

    ``label`` is the default-configuration value of ``@string/app_name``; ``None`` leaves the default
    out, so only ``labels_by_locale`` (``{"fr": "Réglages", "en-rGB": ...}``) define it. With
    ``label_as_reference=False`` the manifest holds ``label`` as literal text instead. Entry order is
    manifest, ``classes.dex`` (``dex_size`` bytes, stored), ``resources.arsc``, the icon.
    """
    labels = dict(labels_by_locale or {})
    if label is not None:
        labels[""] = label
    if not labels or (not label_as_reference and label is None):
        raise ValueError("an APK needs a label: give label, or labels_by_locale with label_as_reference")
    for locale in labels:
        config(locale)  # checks the locale before anything is built
    value: Typed = (_REFERENCE, APP_NAME_ID) if label_as_reference else (_STRING, label or "")
    manifest = binary_xml(manifest_element(package, value, version_code, version_name, launcher_activity),
                          utf8=manifest_utf8)
    dex = b"dex\n035\0" + bytes(max(0, dex_size - 8))
    return zip_archive([
        ("AndroidManifest.xml", manifest, deflate_manifest),
        ("classes.dex", dex, False),
        ("resources.arsc", resources_arsc(package, labels, utf8=arsc_utf8, sparse=sparse), deflate_arsc),
        ("res/drawable/ic_launcher.png", _png(), False),
    ])
