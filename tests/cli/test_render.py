"""Terminal rendering of agent events and the status line (rich, no terminal needed)."""

from __future__ import annotations

import io

from rich.console import Console

from pi_context.agent.events import (
    AssistantStreamEvent,
    CompactionEnd,
    CompactionStart,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from pi_context.cli.render import EventRenderer, collapse
from pi_context.cli.stats import SessionStats, format_tokens, status_line
from pi_context.messages import assistant_message, text_block, tool_result_message


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
    render(CompactionEnd("manual", result={"tokensBefore": 42000}))
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


def test_status_line_shows_window_percent_cache_and_cost() -> None:
    stats = SessionStats(1, 1, 0, 0, 2, 100, 10, 300, 100, 0.0123, 12_300, 0)
    assert (
        status_line(stats, "p/m", 128_000) == "p/m · ctx 12.3k/128.0k (9.6%) · cache 60% · $0.0123"
    )
    unknown = SessionStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, None, 1)
    assert status_line(unknown, "p/m", 128_000) == "p/m · ctx ?/128.0k · cache – · $0.0000"
    assert format_tokens(999) == "999"
    assert format_tokens(1_500_000) == "1.5M"
