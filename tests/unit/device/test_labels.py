"""What ``pm`` and ``cmd package`` print, read into launchable packages, paths and versions; the
label cache on disk."""

from __future__ import annotations

import json
from pathlib import Path

from ufo_mobile.core.device.labels import (
    LabelCache,
    Listed,
    cache_key,
    clean_label,
    launcher_packages,
    package_listing,
    query_failed,
)

# PackageManagerShellCommand.runQueryIntentActivities, --brief (Android 14)
QUERY_BRIEF = """\
3 activities found:
  Activity #0:
    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false
    com.android.settings/.Settings
  Activity #1:
    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false
    com.google.android.dialer/.extensions.GoogleDialtactsActivity
  Activity #2:
    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false
    com.android.settings/.Settings$WifiSettingsActivity
"""

# without --brief: ResolveInfo.dump (ActivityInfo, then ApplicationInfo)
QUERY_FULL = """\
1 activities found:
  Activity #0:
    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false
    ActivityInfo:
      name=com.whatsapp.Main
      packageName=com.whatsapp
      enabled=true exported=true directBootAware=false
      ApplicationInfo:
        packageName=com.whatsapp
"""


def test_launcher_packages_from_every_output_form() -> None:
    assert launcher_packages(QUERY_BRIEF) == ["com.android.settings", "com.google.android.dialer"]
    assert launcher_packages("com.android.chrome/com.google.android.apps.chrome.Main\r\n"
                             "org.telegram.messenger/org.telegram.ui.LaunchActivity\n") == [
        "com.android.chrome", "org.telegram.messenger"]  # --components
    assert launcher_packages(QUERY_FULL) == ["com.whatsapp"]
    assert launcher_packages("No activities found\n") == []


def test_a_missing_or_older_query_command_is_recognised() -> None:
    assert query_failed("/system/bin/sh: cmd: not found")
    assert query_failed("Error: Unknown option: --brief")
    assert query_failed("Unknown command: query-activities")
    assert query_failed("cmd: Can't find service: package")
    assert not query_failed(QUERY_BRIEF) and not query_failed("No activities found\n")


def test_package_listing_with_paths_that_hold_equals_signs() -> None:
    out = ("package:/data/app/~~x4uQ0lr4P3G8oV0Wq5e1Xw==/com.whatsapp-Zp8q2I0Kh6mQ3vN4bYc1Fw==/base.apk=com.whatsapp"
           " versionCode:231017004\n"
           "package:/system/priv-app/Settings/Settings.apk=com.android.settings versionCode:34\r\n"
           "package:/system/framework/framework-res.apk=android versionCode:34\n"
           "garbage line\n")
    assert package_listing(out) == {
        "com.whatsapp": Listed("com.whatsapp", "/data/app/~~x4uQ0lr4P3G8oV0Wq5e1Xw==/com.whatsapp-"
                                               "Zp8q2I0Kh6mQ3vN4bYc1Fw==/base.apk", 231017004),
        "com.android.settings": Listed("com.android.settings", "/system/priv-app/Settings/Settings.apk", 34),
        "android": Listed("android", "/system/framework/framework-res.apk", 34),
    }
    assert package_listing("package:com.example.notes\n") == {"com.example.notes": Listed("com.example.notes")}
    assert package_listing("package:/data/app/x/base.apk=com.example.a uid:10123\n")["com.example.a"].version is None


def test_labels_are_one_clean_line() -> None:
    assert clean_label("  Files by\nGoogle\u202e ", "com.google.android.apps.nbu.files") == "Files by Google"
    assert clean_label("\x00\t", "com.example.x") == "com.example.x"
    assert len(clean_label("x" * 500, "p")) == 100


def test_label_cache_round_trip_keyed_by_version(tmp_path: Path) -> None:
    cache = LabelCache(tmp_path / "labels", "R5CT30ABCDE")
    assert cache.get("com.whatsapp", 1) is None
    cache.put("com.whatsapp", 1, "WhatsApp")
    cache.put("com.nover", None, "Not kept")  # no version: nothing to check a later run against
    cache.save()
    again = LabelCache(tmp_path / "labels", "R5CT30ABCDE")
    assert again.get("com.whatsapp", 1) == "WhatsApp"
    assert again.get("com.whatsapp", 2) is None  # updated app: read again
    assert again.get("com.nover", None) is None
    assert LabelCache(tmp_path / "labels", "another-phone").get("com.whatsapp", 1) is None
    assert json.loads((tmp_path / "labels" / "R5CT30ABCDE.json").read_text())["labels"] == {
        "com.whatsapp": [1, "WhatsApp"]}


def test_label_cache_survives_a_broken_file_and_keeps_memory_only_without_a_directory(tmp_path: Path) -> None:
    (tmp_path / "127.0.0.1_5555.json").write_text("{not json")
    cache = LabelCache(tmp_path, "127.0.0.1:5555")
    assert cache.path == tmp_path / "127.0.0.1_5555.json" and cache.get("a.b", 1) is None
    memory = LabelCache(None, "x")
    memory.put("a.b", 1, "A")
    memory.save()
    assert memory.get("a.b", 1) == "A" and memory.path is None
    assert cache_key("../../etc/passwd") == ".._.._etc_passwd"
