"""The emulated adbd: the ADB transport protocol on 127.0.0.1 (``daemon.EmulatedAdbd``), its
connections, streams, services and the sync protocol."""
