"""The uiautomator2 server of the emulated device (JSON-RPC on ``tcp:9008``) and its window dump."""
