"""Bounded capture of untrusted output: the first and the last bytes, and how much was left out."""

from __future__ import annotations


class BoundedOutput:
    """Keeps the first ``limit - limit // 2`` and the last ``limit // 2`` bytes of a stream.

    Whatever the stream sends, memory stays under ``2 * limit`` bytes. Both ends are kept because a
    flood hides the start and a traceback sits at the end. ``text()`` decodes with ``errors="replace"``
    (a multi-byte character cut at an edge becomes U+FFFD), so it never has more than ``limit``
    characters besides the one-line note of what was left out.
    """

    def __init__(self, limit: int) -> None:
        self._head_limit = limit - limit // 2
        self._tail_limit = limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self._tail_limit:
            self._tail += chunk
            if len(self._tail) > 2 * self._tail_limit:
                del self._tail[:-self._tail_limit]

    def text(self) -> str:
        tail = bytes(self._tail[-self._tail_limit:]) if self._tail_limit else b""
        left_out = self.total - len(self._head) - len(tail)
        if left_out <= 0:
            return (bytes(self._head) + tail).decode(errors="replace")
        head = self._head.decode(errors="replace")
        return f"{head}\n… [{left_out} bytes left out] …\n{tail.decode(errors='replace')}"
