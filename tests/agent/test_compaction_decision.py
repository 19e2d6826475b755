"""pi's _checkCompaction decisions."""

from __future__ import annotations

from typing import Any, cast

from pi_context.agent._compaction import check_compaction
from pi_context.messages import (
    AssistantMessage,
    StopReason,
    assistant_message,
    empty_usage,
    user_message,
)
from pi_context.model import ModelInfo
from pi_context.resources.settings import CompactionSettings
from pi_context.session import Session
from pi_context.testing import SequentialIds

INFO = ModelInfo(provider="p", id="m", api="a", context_window=10_000, max_tokens=1000)
SETTINGS = CompactionSettings(reserve_tokens=2000)


def assistant_ending(
    stop: str = "stop", *, inp: int = 0, out: int = 0, error: str | None = None, model: str = "m"
) -> AssistantMessage:
    """An empty assistant message ending with ``stop`` (and ``error``), its usage ``inp`` + ``out``."""
    usage = empty_usage()
    usage["input"], usage["output"] = inp, out
    usage["totalTokens"] = inp + out
    return assistant_message(
        [],
        api="a",
        provider="p",
        model=model,
        usage=usage,
        stop_reason=cast(StopReason, stop),
        error_message=error,
    )


def decide(message: AssistantMessage, **kwargs: Any) -> str:
    session = Session.in_memory("/tmp", ids=SequentialIds())
    session.append_message(user_message("hi"))
    entry = session.append_message(message)
    decision = check_compaction(
        message,
        entry.id,
        branch=session.branch_entries(),
        projection=session.projection(),
        info=kwargs.pop("info", INFO),
        settings=kwargs.pop("settings", SETTINGS),
        **kwargs,
    )
    return decision.action + (":retry" if decision.will_retry else "")


def test_threshold_is_strict() -> None:
    assert decide(assistant_ending(inp=8000)) == "none"
    assert decide(assistant_ending(inp=8001)) == "threshold"


def test_disabled_settings_disable_everything() -> None:
    off = CompactionSettings(enabled=False)
    assert decide(assistant_ending("error", error="prompt is too long"), settings=off) == "none"
    assert decide(assistant_ending(inp=9999), settings=off) == "none"


def test_error_overflow_retries_once() -> None:
    msg = assistant_ending("error", error="prompt is too long: 20000 tokens > 10000 maximum")
    assert decide(msg) == "overflow:retry"
    assert decide(msg, recovery_attempted=True) == "exhausted"


def test_silent_overflow_compacts_without_retry() -> None:
    assert decide(assistant_ending("stop", inp=10_001)) == "overflow"


def test_length_stop_below_max_tokens_is_recoverable() -> None:
    assert decide(assistant_ending("length", inp=100, out=500)) == "overflow:retry"
    assert decide(assistant_ending("length", inp=100, out=1000)) == "none"


def test_other_model_and_aborted_are_skipped() -> None:
    msg = assistant_ending("error", error="prompt is too long", model="other")
    assert decide(msg) == "none"
    assert decide(assistant_ending("aborted", inp=9000)) == "none"
    assert decide(assistant_ending("aborted", inp=9000), skip_aborted=False) == "threshold"


def test_messages_before_the_latest_compaction_are_stale() -> None:
    session = Session.in_memory("/tmp", ids=SequentialIds())
    first = session.append_message(user_message("hi"))
    msg = assistant_ending(inp=9500)
    entry = session.append_message(msg)
    session.append_compaction("s", first.id, 9500)
    decision = check_compaction(
        msg,
        entry.id,
        branch=session.branch_entries(),
        projection=session.projection(),
        info=INFO,
        settings=SETTINGS,
    )
    assert decision.action == "none"
