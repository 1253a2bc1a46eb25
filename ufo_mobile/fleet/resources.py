"""``python -m ufo_mobile.fleet.resources [--adb-port PORT]``: the phones on this node's adb server as Ray
custom resources, for ``ray start --resources``::

    ray start --address HEAD:6379 --resources "$(python -m ufo_mobile.fleet.resources)"

prints ``{"phone:R58M41ABCDE": 1, "phone:emulator-5554": 1}``: one resource per phone that is
ready (``adb devices`` state ``device``), so that ``batch --engine ray`` runs each task on the
node its phone is attached to. A node whose phones change is started again with the new list.
"""

from __future__ import annotations

import argparse
import json
import sys

from ufo_mobile.fleet.devices import Phone


def node_resources(adb_port: int | None = None, timeout: float = 10.0) -> dict[str, float]:
    """``{"phone:<serial>": 1}`` for each ready phone of the local adb server. Blocking.

    Raises:
        OSError, adbutils.AdbError: the adb server cannot be reached.
    """
    import adbutils

    client = adbutils.AdbClient(port=adb_port, socket_timeout=timeout)
    return {Phone("adb", info.serial).resource: 1.0 for info in client.list() if info.state == "device"}


def main(argv: list[str] | None = None) -> int:
    """The command (see the module docstring); 1 when the adb server cannot be reached."""
    parser = argparse.ArgumentParser(prog="python -m ufo_mobile.fleet.resources",
                                     description="Print this node's phones as Ray resources (JSON).")
    parser.add_argument("--adb-port", type=int, help="the adb server's port (default $ANDROID_ADB_SERVER_PORT or 5037)")
    args = parser.parse_args(argv)
    try:
        resources = node_resources(args.adb_port)
    except Exception as exc:  # noqa: BLE001 - one line, whatever adb said
        print(f"error: the adb server cannot be reached: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(resources))
    return 0


if __name__ == "__main__":
    sys.exit(main())
