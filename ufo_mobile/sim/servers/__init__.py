"""The device-side servers that let real clients drive the simulated phone: the ADB daemon (``adb``)
and the uiautomator2 server (``u2``)."""
