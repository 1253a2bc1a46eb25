"""The AIP task service (``serve``): UFO's agent interaction protocol over WebSocket, with its phones,
tasks, runs and peers."""
