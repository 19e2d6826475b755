"""The cyclic garbage collector paused while ``pictx`` starts.

Start-up allocates a few hundred thousand long-lived objects (modules, classes, functions,
the settings and the session) and almost no garbage, yet the collector runs over them again
and again as they appear, a noticeable share of ``pictx -p``'s time to its first request and
of ``pictx session info``'s (benchmarks/README.md, "Start-up"). So the console script starts with the collector paused;
once the start-up is over, what exists is moved out of the collector's sight (:func:`gc.freeze`:
later collections, after every turn of a long session too, do not walk the start-up's objects
again) and collection resumes. The agent's start-up ends when the agent is built (the agent
command resumes); any other command's when its module is imported
(:class:`~pi_context.cli.lazy_group.LazyGroup`), before it reads a file of any size; and
``main`` resumes in any case when the command returns.

Only the console script pauses it (:func:`pause` is a no-op when the collector was already
off, and :func:`resume` turns on only what :func:`pause` turned off), so a program that calls
``main(argv)`` in-process keeps its own collector settings.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused = False


def pause() -> None:
    """Turn the collector off for the start-up (if it is on)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """The start-up is over: freeze what it built and turn the collector back on."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
