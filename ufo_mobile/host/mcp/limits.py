"""How many MCP sessions the HTTP servers keep, and for how long (no import of the MCP SDK here: the
command line reads the defaults without it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SessionLimits:
    """How many sessions one client address, and all clients together, may hold, and how long a
    session may sit idle before the SDK closes it."""

    per_client: int = 16
    total: int = 128
    idle_seconds: float = 300.0

    def __post_init__(self) -> None:
        if not 0 < self.per_client <= self.total:
            raise ValueError(f"per_client must be 1 to total ({self.total}), not {self.per_client}")
        if not 0 < self.idle_seconds < float("inf"):
            raise ValueError(f"idle_seconds must be a positive number, not {self.idle_seconds}")
