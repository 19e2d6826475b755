"""Published prices per simulator (USD per million tokens) and the bill of one request.

Anthropic: Claude Sonnet 4.5 (input $3, output $15; a 5-minute cache write costs 1.25x the
input price, a cache read 0.1x). OpenAI: GPT-4.1 (input $2, cached input $0.50, output $8;
no write surcharge). Both as published on the providers' pricing pages in 2025.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANTHROPIC_PRICES", "OPENAI_PRICES", "Prices"]


@dataclass(frozen=True, slots=True)
class Prices:
    model: str
    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, *, uncached: int, cache_read: int, cache_write: int, output: int) -> float:
        return (
            uncached * self.input
            + cache_read * self.cache_read
            + cache_write * self.cache_write
            + output * self.output
        ) / 1_000_000

    def models_json_cost(self) -> dict[str, float]:
        """The ``cost`` object of a ``models.json`` model entry."""
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
        }


ANTHROPIC_PRICES = Prices("claude-sonnet-4-5", 3.0, 15.0, 0.30, 3.75)
OPENAI_PRICES = Prices("gpt-4.1", 2.0, 8.0, 0.50, 2.0)
