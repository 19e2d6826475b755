"""Terminal rendering of agent events and the status line (rich, no terminal needed)."""

from __future__ import annotations

import io
from typing import Any

import msgspec
import pytest
from rich.console import Console
from rich.markdown import Markdown

from pi_context.agent.stats import SessionStats
from pi_context.cli.interactive import render as render_module
from pi_context.cli.interactive.render import EventRenderer, collapse
from pi_context.cli.interactive.stats import (
    MessageCounts,
    count_messages,
    format_tokens,
    status_line,
)
from pi_context.compaction.events import CompactionResult
from pi_context.events import (
    AssistantStreamEvent,
    CompactionEnd,
    CompactionStart,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from pi_context.messages import (
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.session.store import Session


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=80, force_terminal=False, color_system=None), buffer


def test_streamed_markdown_thinking_and_tool_output() -> None:
    console, buffer = _console()
    render = EventRenderer(console)
    render(MessageUpdate(AssistantStreamEvent("thinking_start", 0)))
    render(MessageUpdate(AssistantStreamEvent("thinking_delta", 0, delta="pondering")))
    render(MessageUpdate(AssistantStreamEvent("text_start", 1)))
    for piece in ("# Title\n\n", "some **bold** ", "text"):
        render(MessageUpdate(AssistantStreamEvent("text_delta", 1, delta=piece)))
    final = assistant_message(
        [
            {"type": "thinking", "thinking": "pondering"},
            text_block("# Title\n\nsome **bold** text"),
        ],
        api="a",
        provider="p",
        model="m",
    )
    render(MessageEnd(final))
    output = "\n".join(f"line {n}" for n in range(1, 21))
    render(ToolExecutionStart("c1", "bash", {"command": "seq 20"}))
    render(
        ToolExecutionEnd(
            "c1", "bash", tool_result_message("c1", "bash", [text_block(output)]), is_error=False
        )
    )
    render.close()
    text = buffer.getvalue()
    assert "pondering" in text
    assert "Title" in text
    assert "some bold text" in text  # Markdown rendered, not raw asterisks
    assert "▶ bash seq 20" in text
    assert "line 8" in text
    assert "line 9" not in text
    assert "12 more lines (collapsed)" in text


def test_failed_and_successful_compaction_messages() -> None:
    console, buffer = _console()
    render = EventRenderer(console, estimate_after=lambda: 1500)
    render(CompactionStart("manual"))
    render(CompactionEnd("manual", result=_compaction_result(tokens_before=42000)))
    render(CompactionStart("threshold"))
    render(CompactionEnd("threshold", error_message="model refused"))
    render.close()
    text = buffer.getvalue()
    assert "Compacted: 42.0k tokens before → about 1.5k after" in text
    assert "Compaction failed: model refused" in text
    assert render.errors_shown == 1


def test_error_stop_is_shown() -> None:
    console, buffer = _console()
    render = EventRenderer(console)
    message = assistant_message(
        [], api="a", provider="p", model="m", stop_reason="error", error_message="rate limited"
    )
    render(MessageEnd(message))
    assert "rate limited" in buffer.getvalue()


def test_collapse() -> None:
    assert collapse("a\nb\n", 2) == ("a\nb", 0)
    assert collapse("a\nb\nc", 2) == ("a\nb", 1)


def _stats(**changes: Any) -> SessionStats:
    base = SessionStats(
        tokens=510,
        cost=0.0123,
        cache_read=300,
        cache_write=100,
        hit_ratio=0.6,
        context_tokens=12_300,
        context_window=128_000,
        input=100,
        output=10,
        requests=1,
    )
    return msgspec.structs.replace(base, **changes)


def test_status_line_shows_window_percent_cache_and_cost() -> None:
    line = status_line(_stats(), "p/m")
    assert line == "p/m · ctx 12.3k/128.0k (9.6%) · cache 60% · $0.0123"
    unknown = _stats(context_tokens=None, input=0, cache_read=0, cache_write=0, cost=0.0)
    assert status_line(unknown, "p/m") == "p/m · ctx ?/128.0k · cache – · $0.0000"
    assert status_line(_stats(context_window=None), "p/m").startswith("p/m · ctx 12.3k · cache")
    assert format_tokens(999) == "999"
    assert format_tokens(1_500_000) == "1.5M"


def test_count_messages_by_role_with_tool_calls_and_compactions() -> None:
    session = Session.in_memory("/p")
    first = session.append_message(user_message("hi"))
    calls = [tool_call("c1", "read", {"path": "a"}), tool_call("c2", "bash", {"command": "ls"})]
    session.append_message(
        assistant_message([text_block("looking"), *calls], api="a", provider="p", model="m")
    )
    session.append_message(tool_result_message("c1", "read", [text_block("A")]))
    session.append_compaction("summary", first.id, 100)
    session.append_label(first.id, "start")
    counts = count_messages(session.entries)
    assert counts == MessageCounts(
        entries=5,
        user_messages=1,
        assistant_messages=1,
        tool_calls=2,
        tool_results=1,
        compactions=1,
    )


def test_streaming_redraws_are_throttled_and_the_final_text_is_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[str] = []

    class CountingMarkdown(Markdown):
        def __init__(self, markup: str, **kwargs: Any) -> None:
            parsed.append(markup)
            super().__init__(markup, **kwargs)

    monkeypatch.setattr(render_module, "Markdown", CountingMarkdown)
    now = [100.0]
    console, buffer = _console()
    render = EventRenderer(console, clock=lambda: now[0])
    render(MessageUpdate(AssistantStreamEvent("text_start", 0)))
    for piece in ("one ", "two ", "three "):  # same instant as the first frame: not redrawn
        render(MessageUpdate(AssistantStreamEvent("text_delta", 0, delta=piece)))
    assert parsed == []
    now[0] += 1
    render(MessageUpdate(AssistantStreamEvent("text_delta", 0, delta="four")))
    assert parsed == ["one two three four"]
    render(MessageUpdate(AssistantStreamEvent("text_delta", 0, delta=" five")))
    final = assistant_message(
        [text_block("one two three four five")], api="a", provider="p", model="m"
    )
    render(MessageEnd(final))
    assert parsed[-1] == "one two three four five"
    assert "one two three four five" in buffer.getvalue()


def test_text_streamed_before_a_tool_call_is_not_lost_when_frames_were_skipped() -> None:
    console, buffer = _console()
    render = EventRenderer(console, clock=lambda: 5.0)
    render(MessageUpdate(AssistantStreamEvent("text_start", 0)))
    render(MessageUpdate(AssistantStreamEvent("text_delta", 0, delta="Let me ")))
    render(MessageUpdate(AssistantStreamEvent("text_delta", 0, delta="look.")))
    render.close()  # e.g. the run was aborted before the message ended
    assert "Let me look." in buffer.getvalue()


def test_error_texts_are_shown_literally_not_as_markup() -> None:
    """A model's or an extension's error text is data: ``[/red]`` or ``[link=…]`` in it neither
    raises (rich's MarkupError) nor styles anything."""
    from pi_context.events import AutoRetryStart, ExtensionFailure

    console, buffer = _console()
    renderer = EventRenderer(console)
    renderer.handle(
        ExtensionFailure(event="tool_call", error="bad [/red] [link=https://x]y[/link]")
    )
    renderer.handle(
        AutoRetryStart(attempt=1, max_attempts=3, delay_ms=1000, error_message="overloaded [/b]")
    )
    shown = buffer.getvalue()
    assert "bad [/red] [link=https://x]y[/link]" in shown
    assert "overloaded [/b]" in shown


def _compaction_result(*, tokens_before: int) -> CompactionResult:
    session = Session.create(None, cwd=".")
    kept = session.append_message(user_message("keep this"))
    entry = session.append_compaction("summary", kept.id, tokens_before)
    return CompactionResult("summary", kept.id, tokens_before, 100, None, None, entry)
