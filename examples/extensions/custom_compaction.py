"""Example extension: compaction summaries written by a different (e.g. cheaper) model.

pi-context calls ``session_before_compact`` before it summarizes. This extension answers with
its own summary, produced by a model of your choice, so the session's main model is not spent
on bookkeeping. If the summarizer fails, the extension returns nothing and the built-in
summarizer runs as usual.

Use it in one of two ways:

* copy this file to ``~/.pi/agent/extensions/`` and set ``PI_COMPACTION_MODEL`` (model id),
  ``PI_COMPACTION_BASE_URL`` (an OpenAI-compatible endpoint, e.g. a local llama.cpp server)
  and optionally ``PI_COMPACTION_API_KEY``;
* or, from Python, ``load_extensions(..., registrations=[("summaries", make_extension(model))])``
  with any :class:`pi_context.model.Model`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pi_context import (
    ExtensionAPI,
    ExtensionContext,
    ExtensionHooks,
    Model,
    ModelInfo,
    ModelRequest,
    RequestOptions,
    complete,
    text_of,
    user_message,
)
from pi_context.compaction.events import BeforeCompact
from pi_context.extensions.events import CompactionDraft, SessionBeforeCompactResult

SYSTEM_PROMPT = (
    "You condense coding-session transcripts into handover notes for another engineer. "
    "Keep goals, decisions, file paths, commands that worked, open problems and next steps. "
    "Drop chit-chat. Write plain Markdown."
)

MAX_TOOL_OUTPUT = 1500


def _line(message: Mapping[str, Any]) -> str:
    role = message.get("role")
    if role == "assistant":
        parts = []
        for block in message.get("content", []):
            if block.get("type") == "text":
                parts.append(block["text"])
            elif block.get("type") == "toolCall":
                parts.append(f"(calls {block['name']} with {block.get('arguments')})")
        return "Assistant: " + "\n".join(parts)
    if role == "toolResult":
        text = text_of(message.get("content"))
        if len(text) > MAX_TOOL_OUTPUT:
            text = text[:MAX_TOOL_OUTPUT] + " [...]"
        return f"Result of {message.get('toolName')}: {text}"
    if role in ("compactionSummary", "branchSummary"):
        return f"Earlier summary: {message.get('summary', '')}"
    return f"{str(role).capitalize()}: {text_of(message.get('content'))}"


def build_prompt(
    messages: Sequence[Mapping[str, Any]],
    previous_summary: str | None,
    instructions: str | None,
) -> str:
    """The request text: earlier notes, the transcript to fold in, and any user focus."""
    sections = []
    if previous_summary:
        sections.append(f"Notes so far:\n{previous_summary}")
    sections.append(
        "Transcript to fold into the notes:\n" + "\n\n".join(_line(m) for m in messages)
    )
    if instructions:
        sections.append(f"The user asks you to focus on: {instructions}")
    sections.append("Write the updated handover notes.")
    return "\n\n".join(sections)


class HandoverSummaries(ExtensionHooks):
    """Typed hooks (the class style): compaction summaries written by ``model``."""

    def __init__(self, model: Model, *, max_tokens: int = 2048) -> None:
        self.model = model
        self.max_tokens = max_tokens

    async def on_session_before_compact(
        self, event: BeforeCompact, ctx: ExtensionContext
    ) -> SessionBeforeCompactResult | None:
        prep = event.preparation
        messages = [*prep.messages_to_summarize, *prep.turn_prefix_messages]
        if not messages:
            return None
        prompt = build_prompt(messages, prep.previous_summary, event.custom_instructions)
        request = ModelRequest(
            messages=[user_message(prompt)],
            system_prompt=SYSTEM_PROMPT,
            options=RequestOptions(max_tokens=self.max_tokens, cache="none"),
        )
        model = self.model
        done = await complete(model, request)
        summary = text_of(done.message["content"]).strip()
        if done.error is not None or done.message["stopReason"] != "stop" or not summary:
            return None  # fall back to the built-in summarizer
        return SessionBeforeCompactResult(
            compaction=CompactionDraft(
                summary=summary,
                first_kept_entry_id=prep.first_kept_entry_id,
                tokens_before=prep.tokens_before,
                usage=done.message["usage"],
                details={"summarizer": f"{model.info.provider}/{model.info.id}"},
            )
        )


def make_extension(model: Model, *, max_tokens: int = 2048) -> Callable[[ExtensionAPI], None]:
    """A ``register(pi)`` that summarizes compactions with ``model``."""

    def register(pi: ExtensionAPI) -> None:
        pi.add_hooks(HandoverSummaries(model, max_tokens=max_tokens))

    return register


def register(pi: ExtensionAPI) -> None:
    """Directory entry point: configure the summarizer from the environment."""
    model_id = os.environ.get("PI_COMPACTION_MODEL")
    base_url = os.environ.get("PI_COMPACTION_BASE_URL")
    if not model_id or not base_url:
        return  # not configured: leave compaction to pi-context
    from pi_context.providers.openai import OpenAIChatModel

    info = ModelInfo(
        provider="compaction",
        id=model_id,
        api="openai-completions",
        context_window=int(os.environ.get("PI_COMPACTION_CONTEXT_WINDOW", "128000")),
        max_tokens=4096,
        base_url=base_url,
    )
    model = OpenAIChatModel(
        info, api_key=os.environ.get("PI_COMPACTION_API_KEY"), base_url=base_url
    )
    make_extension(model)(pi)
