"""What the simulated assistant answers, decided from the request alone.

* A summarization request (no tools and the user text opens with ``<conversation>`` or
  ``# Conversation``, the framing pi and pictx both use; or, with tools, the last user text
  opens with pictx's shared-request heading ``## Checkpoint summary request``) gets a deterministic structured
  summary whose length follows the input: one token of summary per :data:`SUMMARY_RATIO`
  tokens of input, within [:data:`SUMMARY_MIN`, :data:`SUMMARY_MAX`]. It names the files the
  conversation mentions. Content is not judged, cost is.
* Otherwise the current prompt is the highest ticket (``INV-1042``) in any user text or the
  highest prompt number in the tool-call ids (``tc0042s01``); the next step is one past the
  highest step id of that prompt present in the request. Past the last step comes the answer.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from benchmarks.economy.wire import Conversation, Reply, ReplyCall
from benchmarks.economy.workload import TICKET_BASE, Probe, Workload

__all__ = ["Decision", "Responder", "answer_probe", "tool_call_id"]

SUMMARY_RATIO = 12
SUMMARY_MIN = 250
SUMMARY_MAX = 2500

SHARED_SUMMARY_HEADING = "## Checkpoint summary request"
"""The opening of pictx's shared summary request (``compaction.shareCache``)."""
_TICKET = re.compile(r"INV-(\d{4})\b")
_CALL_ID = re.compile(r"tc(\d{4})s(\d{2})")
_PATH = re.compile(r"\b(?:inventory|tests)/[\w./-]+\.py\b")
_SUMMARY_WORDS = (
    "the user",
    "asked to",
    "fix failing checks",
    "in the inventory service;",
    "the assistant",
    "read the module,",
    "found the stale branch",
    "and added the fix marker;",
    "the checks",
    "pass again.",
    "Open question:",
    "strict mode coverage.",
)


def tool_call_id(prompt: int, step: int) -> str:
    return f"tc{prompt:04d}s{step:02d}"


@dataclass(frozen=True, slots=True)
class Decision:
    reply: Reply
    prompt: int
    kind: str
    """``turn`` or ``summary``."""
    probe: str = ""
    """How a probe was answered (see :attr:`~.ledger.RequestRecord.probe`); empty otherwise."""


RECALL_STEP = 0
REREAD_STEP = 1
"""The step ids of a probe's tool calls: ``recall`` first, then a file read."""


def answer_probe(conv: Conversation, index: int, probe: Probe, steps_made: set[int]) -> Decision:
    """A probe answered from the request alone, the way an assistant that knows only what it
    sees would: the fact when the request holds it; else ``recall`` with the probe's keywords
    when the tool is offered and was not tried yet; else the file read again when the fact is a
    file's content; else "unknown"."""
    if probe.fact in conv.text:
        how = (
            "reread"
            if REREAD_STEP in steps_made
            else "recall"
            if RECALL_STEP in steps_made
            else "context"
        )
        return Decision(Reply(f"It was {probe.fact}."), index, "turn", how)
    if "recall" in conv.tool_names and RECALL_STEP not in steps_made:
        call = ReplyCall(tool_call_id(index, RECALL_STEP), "recall", {"query": probe.keywords})
        return Decision(Reply("", [call]), index, "turn")
    if probe.path and "read" in conv.tool_names and REREAD_STEP not in steps_made:
        call = ReplyCall(tool_call_id(index, REREAD_STEP), "read", {"path": probe.path})
        return Decision(Reply("", [call]), index, "turn")
    return Decision(
        Reply("I do not know any more; it is not in what I can see."), index, "turn", "unknown"
    )


def is_summary_request(conv: Conversation) -> bool:
    head = conv.last_user_text.lstrip()
    if head.startswith(SHARED_SUMMARY_HEADING):
        return True  # pictx's cache-sharing request: the conversation, then the instructions
    return not conv.has_tools and (head.startswith(("<conversation>", "# Conversation")))


def summary_text(input_text: str, input_tokens: int) -> str:
    """A structured summary of about ``input_tokens / SUMMARY_RATIO`` tokens (deterministic)."""
    target = min(SUMMARY_MAX, max(SUMMARY_MIN, input_tokens // SUMMARY_RATIO))
    files = sorted(set(_PATH.findall(input_text)))[:40]
    seed = int.from_bytes(hashlib.blake2b(input_text.encode(), digest_size=4).digest(), "big")
    lines = [
        "## Goal",
        "Keep the inventory service's checks green and add the requested helpers.",
        "## Constraints & Preferences",
        "- Run the module's checks after every change.",
        "## Progress",
        "### Done",
    ]
    lines += [f"- [x] Worked on {path}" for path in files]
    lines += ["### In Progress", "- [ ] Continue with the next ticket", "## Key Decisions"]
    words = len(" ".join(lines).split())
    k = seed
    while words * 4 < target * 3:  # ~0.75 words per token
        sentence = " ".join(
            _SUMMARY_WORDS[(k + i) % len(_SUMMARY_WORDS)] for i in range(len(_SUMMARY_WORDS))
        )
        lines.append(f"- {sentence}")
        words += len(sentence.split())
        k += 5
    lines += [
        "## Next Steps",
        "1. Pick up the next failing module.",
        "## Critical Context",
        "(none)",
    ]
    return "\n".join(lines)


class Responder:
    def __init__(self, workload: Workload) -> None:
        self.workload = workload

    def current_prompt(self, conv: Conversation) -> int:
        best = -1
        for text in conv.user_texts:
            for match in _TICKET.finditer(text):
                best = max(best, int(match.group(1)) - TICKET_BASE)
        for call_id in conv.tool_call_ids:
            found = _CALL_ID.search(call_id)
            if found:
                best = max(best, int(found.group(1)))
        return best

    def decide(self, conv: Conversation, *, input_text: str, input_tokens: int) -> Decision:
        if is_summary_request(conv):
            return Decision(Reply(summary_text(input_text, input_tokens)), -1, "summary")
        index = self.current_prompt(conv)
        prompt = self.workload.prompt(index)
        if prompt is None:
            return Decision(Reply("I have nothing to do here."), index, "turn")
        step = 0
        made: set[int] = set()
        for call_id in conv.tool_call_ids:
            match = _CALL_ID.search(call_id)
            if match and int(match.group(1)) == index:
                step = max(step, int(match.group(2)) + 1)
                made.add(int(match.group(2)))
        if prompt.probe is not None:
            return answer_probe(conv, index, prompt.probe, made)
        if step < len(prompt.steps):
            tool = prompt.steps[step]
            call = ReplyCall(tool_call_id(index, step), tool.name, tool.arguments)
            return Decision(Reply("", [call]), index, "turn")
        return Decision(Reply(prompt.answer), index, "turn")
