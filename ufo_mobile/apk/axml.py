"""``AndroidManifest.xml`` in Android's binary XML (AXML): the package, version and application label.

An AXML file is one ``RES_XML_TYPE`` chunk holding a string pool, a resource map (the attribute
resource id of each of the first strings) and a flat run of namespace and element start/end chunks.
Android identifies ``android:`` attributes by their resource id, not their name (obfuscators rename
them), and so does this parser; ``package`` has no id and is matched by name, as Android does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ufo_mobile.apk.res import (
    INT_TYPES,
    REFERENCE_TYPES,
    STRING_POOL,
    TYPE_STRING,
    Chunk,
    StringPool,
    Value,
    children,
    root_chunk,
    u16,
    u32,
)
from ufo_mobile.errors import ApkError

XML, XML_RESOURCE_MAP, XML_START_ELEMENT, XML_END_ELEMENT = 0x0003, 0x0180, 0x0102, 0x0103
_NO_INDEX = 0xFFFFFFFF
_ATTRIBUTE_IDS = {
    0x01010001: "label", 0x01010003: "name", 0x0101000E: "enabled",
    0x0101021B: "versionCode", 0x0101021C: "versionName",
}
_MAIN, _LAUNCHER = "android.intent.action.MAIN", "android.intent.category.LAUNCHER"
_WHAT = "AndroidManifest.xml"


@dataclass(frozen=True)
class ManifestInfo:
    """What the manifest says about the app. The label is a resource id or literal text (or neither)."""

    package: str
    version_code: int | None = None
    version_name: str | None = None  # None when absent or a resource reference
    label_ref: int | None = None
    label_text: str | None = None
    launcher_activities: tuple[str, ...] = ()


@dataclass
class _Attr:
    value: Value
    text: str | None


@dataclass
class _Component:
    name: str | None
    enabled: bool
    launcher: bool = False
    actions: set[str] = field(default_factory=set)
    categories: set[str] = field(default_factory=set)


class _Walk:
    """One pass over the element chunks, keeping only what ``ManifestInfo`` needs."""

    def __init__(self, buf: bytes, pool: StringPool, resource_ids: list[int]) -> None:
        self.buf, self.pool, self.resource_ids = buf, pool, resource_ids
        self.path: list[str] = []
        self.manifest: dict[str, _Attr] | None = None
        self.application: dict[str, _Attr] = {}
        self.component: _Component | None = None
        self.components: list[_Component] = []

    def start(self, chunk: Chunk) -> None:
        ext = chunk.body
        if ext + 20 > chunk.end:
            raise ApkError(f"{_WHAT}: element at offset {chunk.offset} is truncated")
        tag = self.pool.get(u32(self.buf, ext + 4))
        self.path.append(tag)
        attrs = self._attributes(chunk)
        depth, parent = len(self.path), self.path[-2] if len(self.path) > 1 else ""
        if depth == 1:
            if tag != "manifest":
                raise ApkError(f"{_WHAT}: the root element is <{tag[:40]}>, not <manifest>")
            self.manifest = attrs
        elif depth == 2 and tag == "application" and not self.application:
            self.application = attrs
        elif depth == 3 and parent == "application" and tag in ("activity", "activity-alias"):
            enabled = attrs.get("enabled")
            self.component = _Component(_text(attrs.get("name")), enabled is None or enabled.value.data != 0)
        elif depth == 4 and self.component and tag == "intent-filter":
            self.component.actions, self.component.categories = set(), set()
        elif depth == 5 and self.component and parent == "intent-filter" and tag in ("action", "category"):
            name = _text(attrs.get("name")) or ""
            (self.component.actions if tag == "action" else self.component.categories).add(name)

    def end(self) -> None:
        if not self.path:
            raise ApkError(f"{_WHAT}: an element ends that never started")
        depth = len(self.path)
        tag = self.path.pop()
        component = self.component
        if component is None:
            return
        if depth == 4 and tag == "intent-filter":
            component.launcher |= _MAIN in component.actions and _LAUNCHER in component.categories
        elif depth == 3:
            self.components.append(component)
            self.component = None

    def _attributes(self, chunk: Chunk) -> dict[str, _Attr]:
        ext = chunk.body
        start, size, count = u16(self.buf, ext + 8), u16(self.buf, ext + 10), u16(self.buf, ext + 12)
        attrs: dict[str, _Attr] = {}
        if not count:
            return attrs
        if size < 20 or ext + start + size * count > chunk.end:
            raise ApkError(f"{_WHAT}: {count} attributes of {size} bytes do not fit their element")
        for pos in range(ext + start, ext + start + size * count, size):
            key = self._key(u32(self.buf, pos + 4))
            raw = u32(self.buf, pos + 8)
            value = Value.at(self.buf, pos + 12, chunk.end, _WHAT)
            text = None
            if value.type == TYPE_STRING:
                text = self.pool.get(value.data)
            elif raw != _NO_INDEX:
                text = self.pool.get(raw)
            if key and key not in attrs:
                attrs[key] = _Attr(value, text)
        return attrs

    def _key(self, name: int) -> str:
        if name == _NO_INDEX:
            return ""
        if name < len(self.resource_ids) and self.resource_ids[name]:
            rid = self.resource_ids[name]
            return _ATTRIBUTE_IDS.get(rid, f"#{rid:08x}")
        return self.pool.get(name)


def _text(attr: _Attr | None) -> str | None:
    return None if attr is None else attr.text


def _signed(data: int) -> int:
    return data - (1 << 32) if data & 0x80000000 else data


def _version_code(attr: _Attr | None) -> int | None:
    if attr is None:
        return None
    if attr.value.type in INT_TYPES:
        return _signed(attr.value.data)
    text = (attr.text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 20 else None


def _full_name(package: str, name: str) -> str:
    if name.startswith("."):
        return package + name
    return name if "." in name else f"{package}.{name}"


def parse_manifest(axml: bytes) -> ManifestInfo:
    """Parse a binary ``AndroidManifest.xml``."""
    root = root_chunk(axml, XML, _WHAT)
    pool: StringPool | None = None
    resource_ids: list[int] = []
    walk: _Walk | None = None
    for chunk in children(axml, root, _WHAT):
        if chunk.type == STRING_POOL and pool is None:
            pool = StringPool(axml, chunk, _WHAT)
        elif chunk.type == XML_RESOURCE_MAP and walk is None:
            resource_ids = [u32(axml, pos) for pos in range(chunk.body, chunk.end - 3, 4)]
        elif chunk.type in (XML_START_ELEMENT, XML_END_ELEMENT):
            if pool is None:
                raise ApkError(f"{_WHAT}: an element comes before the string pool")
            walk = walk or _Walk(axml, pool, resource_ids)
            if chunk.type == XML_START_ELEMENT:
                walk.start(chunk)
            else:
                walk.end()
    if walk is None or walk.manifest is None:
        raise ApkError(f"{_WHAT}: no <manifest> element")
    return _info(walk.manifest, walk.application, walk.components)


def _info(manifest: dict[str, _Attr], application: dict[str, _Attr], components: list[_Component]) -> ManifestInfo:
    package = _text(manifest.get("package"))
    if not package:
        raise ApkError(f"{_WHAT}: <manifest> has no package attribute")
    version_name = manifest.get("versionName")
    label = application.get("label")
    label_ref = label_text = None
    if label is not None and label.value.type in REFERENCE_TYPES and label.value.data:
        label_ref = label.value.data
    elif label is not None and label.value.type == TYPE_STRING:
        label_text = label.text
    launchers: list[str] = []
    for component in components:
        if component.launcher and component.enabled and component.name:
            full = _full_name(package, component.name)
            if full not in launchers:
                launchers.append(full)
    return ManifestInfo(
        package=package,
        version_code=_version_code(manifest.get("versionCode")),
        version_name=version_name.text if version_name and version_name.value.type == TYPE_STRING else None,
        label_ref=label_ref,
        label_text=label_text,
        launcher_activities=tuple(launchers),
    )
