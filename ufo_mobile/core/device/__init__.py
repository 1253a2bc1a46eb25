"""The device port and its drivers (adb, uiautomator2, the simulated phone) and wrappers (see docs/architecture.md)."""
