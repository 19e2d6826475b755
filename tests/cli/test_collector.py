"""The collector is paused only by whoever turned it off, and comes back with the start-up's
objects frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pi_context.cli import collector


@pytest.fixture(autouse=True)
def restore_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_pause_then_resume_turns_it_back_on_and_freezes_what_exists() -> None:
    gc.enable()
    gc.unfreeze()
    collector.pause()
    assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0


def test_resume_twice_or_without_pause_changes_nothing() -> None:
    gc.enable()
    gc.unfreeze()
    collector.resume()
    assert gc.get_freeze_count() == 0
    collector.pause()
    collector.resume()
    frozen = gc.get_freeze_count()
    collector.resume()
    assert gc.get_freeze_count() == frozen


def test_a_collector_someone_else_turned_off_stays_off() -> None:
    gc.disable()
    gc.unfreeze()  # an earlier test in this process may have frozen its objects
    collector.pause()
    collector.resume()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0
