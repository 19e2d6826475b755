"""How deep an entry's JSON may nest, and the cheap tests that a line stays within it.

An entry nested deeper than :data:`CONTEXT_MAX_DEPTH` is kept in the file but left out of the
context (see :data:`~pi_context.session.entries.UNREADABLE`). Measuring the depth of a decoded
value walks all of it, so a line is first bounded by counting: a JSON value nested ``d``
levels deep has ``d`` opening and ``d`` closing brackets outside its strings.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CONTEXT_MAX_DEPTH", "SHALLOW_LENGTH", "nests_deeper_than", "shallow_line"]

CONTEXT_MAX_DEPTH: Final = 500
"""The deepest an entry's JSON may nest (objects and arrays inside each other, the entry's own
object counted) and still reach the context.

Every line pi writes loads (up to ``_json.MAX_DEPTH``) and is kept, shown and exported. But a
request goes out through encoders that recurse (the provider SDKs hand the body to the
standard library's JSON encoder, which stops near Python's recursion limit, less the frames
already on the stack: about 950 levels in a plain agent run), so an entry nested deeper is
left out of the context, wherever it came from (a file, or a model reply stored in this
process), and reported with its line; the session goes on without it. Half the encoder's
reach leaves room for the frames of extensions and nested calls.
"""

SHALLOW_LENGTH: Final = 2 * CONTEXT_MAX_DEPTH + 1
"""No JSON text of at most this many bytes (outside its strings) nests deeper than
:data:`CONTEXT_MAX_DEPTH`: every level takes two of them."""

_NOT_OPENING: Final = bytes(b for b in range(256) if b not in b"{[")


def shallow_line(line: bytes) -> bool:
    """Whether the JSON text ``line`` is sure to nest no deeper than :data:`CONTEXT_MAX_DEPTH`:
    it has at most :data:`SHALLOW_LENGTH` bytes, or at most ``CONTEXT_MAX_DEPTH`` opening
    brackets (in strings or not). Any other line may, and needs its value walked."""
    return (
        len(line) <= SHALLOW_LENGTH
        # the opening brackets kept, the rest deleted: one pass over the line
        or len(line.translate(None, _NOT_OPENING)) <= CONTEXT_MAX_DEPTH
    )


def nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` holds objects and arrays (tuples too) more than ``limit`` levels
    inside each other (``[]`` is one level); iterative, so any depth is measured."""
    containers = (dict, list, tuple)
    if type(value) not in containers:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        for child in item.values() if type(item) is dict else item:
            if type(child) in containers:
                stack.append((child, depth + 1))
    return False
