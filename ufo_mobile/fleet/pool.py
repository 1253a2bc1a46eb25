"""The pool of phones: one task per phone at a time; a phone that was lost is taken out for good."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ufo_mobile.fleet.devices import Phone


class Pool:
    """Free and busy phones. Not thread-safe: the batch's event loop is its only user."""

    def __init__(self, phones: Iterable[Phone]) -> None:
        self.phones = list(phones)
        names = [p.name for p in self.phones]
        if len(set(names)) != len(names):
            raise ValueError(f"a phone is in the pool twice: {names}")
        self._free: list[Phone] = list(self.phones)
        self._busy: set[str] = set()
        self.removed: dict[str, str] = {}  # name -> why

    @property
    def alive(self) -> list[Phone]:
        """The phones still in the pool (free or busy), in the order given."""
        return [p for p in self.phones if p.name not in self.removed]

    @property
    def free(self) -> list[Phone]:
        """The phones waiting for a task."""
        return list(self._free)

    @property
    def busy(self) -> set[str]:
        """The names of the phones running a task."""
        return set(self._busy)

    def take(self, avoid: Collection[str] = ()) -> Phone | None:
        """A free phone, or None for now. A phone in ``avoid`` (where this task lost its phone) is
        given only when no other phone is left in the pool; while one is, busy or not, the task waits."""
        pick = next((p for p in self._free if p.name not in avoid), None)
        if pick is None and self._free and all(p.name in avoid for p in self.alive):
            pick = self._free[0]
        if pick is not None:
            self._free.remove(pick)
            self._busy.add(pick.name)
        return pick

    def give_back(self, phone: Phone) -> None:
        """Return a phone ``take`` gave (free again, unless it was removed meanwhile)."""
        if phone.name not in self._busy:
            raise ValueError(f"{phone.name} was not taken from the pool")
        self._busy.discard(phone.name)
        if phone.name not in self.removed:
            self._free.append(phone)

    def remove(self, phone: Phone, why: str) -> None:
        """Take ``phone`` out of the pool (busy or free); it is never handed out again."""
        self.removed.setdefault(phone.name, why)
        self._busy.discard(phone.name)
        self._free = [p for p in self._free if p.name != phone.name]
