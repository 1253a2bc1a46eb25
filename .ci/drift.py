"""One line naming what drifted: the versions installed in this environment (the newest the ranges in
setup.cfg allow) against the pinned ones in constraints.txt.

    python .ci/drift.py constraints.txt
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line.strip())
        if match:
            found[canonical(match.group(1))] = match.group(2)
    return found


def installed() -> dict[str, str]:
    return {canonical(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}


def drift_line(pinned: dict[str, str], here: dict[str, str]) -> str:
    changed = [f"{name} {version} -> {here[name]}" for name, version in sorted(pinned.items())
               if name in here and here[name] != version]
    added = [f"{name} {version} (new)" for name, version in sorted(here.items())
             if name not in pinned and name not in ("pip", "setuptools", "wheel", "ufo-mobile")]
    if not changed and not added:
        return "drift: none (the newest versions the ranges allow are the pinned ones)"
    return f"drift: {len(changed) + len(added)} against constraints.txt: {', '.join(changed + added)}"


def main(argv: list[str]) -> int:
    print(drift_line(pins(Path(argv[1])), installed()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
