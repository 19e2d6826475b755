"""``pictx --list-models [search]``: the usable models as pi's table (spec agent-parity §4.6).

Only models with a key (available) are listed, sorted by provider then id; ``search`` keeps
those whose ``"<provider> <id>"`` matches it fuzzily (every word of the search, in order of
its letters, case-insensitive). Columns ``provider  model  context  max-out  thinking
images``, each padded to its widest cell and joined by two spaces.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_context.model import ModelInfo

__all__ = ["fuzzy_match", "model_table", "token_count"]

_HEADER = ("provider", "model", "context", "max-out", "thinking", "images")


def token_count(n: int) -> str:
    """``1.5M``, ``200K``, ``32.8K``, ``512`` (one decimal unless whole)."""
    for size, unit in ((1_000_000, "M"), (1_000, "K")):
        if n >= size:
            value = round(n / size, 1)
            return f"{value:g}{unit}" if value != int(value) else f"{int(value)}{unit}"
    return str(n)


def fuzzy_match(search: str, text: str) -> bool:
    """Every whitespace-separated word of ``search`` occurs in ``text`` as a subsequence."""
    lowered = text.lower()
    for word in search.lower().split():
        at = 0
        for char in word:
            at = lowered.find(char, at)
            if at < 0:
                return False
            at += 1
    return True


def model_table(models: Sequence[ModelInfo], search: str | None) -> list[str]:
    """The table's lines (header first); empty when nothing is listed."""
    chosen = [m for m in models if not search or fuzzy_match(search, f"{m.provider} {m.id}")]
    chosen.sort(key=lambda m: (m.provider.lower(), m.id.lower()))
    if not chosen:
        return []
    rows = [_HEADER] + [
        (
            m.provider,
            m.id,
            token_count(m.context_window),
            token_count(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if m.images else "no",
        )
        for m in chosen
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) for row in rows]
