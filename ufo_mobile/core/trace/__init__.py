"""The run directory: its writer, ``run.log``, and runs read back (see docs/architecture.md)."""
