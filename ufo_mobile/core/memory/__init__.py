"""The shared state of a run, its reducers and the typed step records (see docs/architecture.md)."""
