"""What the simulated assistant answers, decided from the request alone.

* A summarization request (no tools and the user text opens with ``<conversation>`` or
  ``# Conversation``, the framing pi and pictx both use; or, with tools, the last user text
  opens with pictx's shared-request heading ``## Checkpoint summary request``) gets a deterministic structured
  summary whose length follows the input: one token of summary per :data:`SUMMARY_RATIO`
  tokens of input, within [:data:`SUMMARY_MIN`, :data:`SUMMARY_MAX`]. It names the files the
  conversation mentions, and keeps each planted retention fact found in its input with the
  probability the run's setting gives its kind (:data:`SUMMARY_KEEP`, ``--summary-keep``): one
  rate for a fact in the new transcript, by kind, and one for a fact carried over from the
  previous summary. The draw is deterministic per (seed, fact, summary request).
* Otherwise the current prompt is the highest ticket (``INV-1042``) in any user text or the
  highest prompt number in the tool-call ids (``tc0042s01``); the next step is one past the
  highest step id of that prompt present in the request. Past the last step comes the answer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.economy.wire import Conversation, Reply, ReplyCall
from benchmarks.economy.workload import TICKET_BASE, Probe, Workload

__all__ = [
    "SUMMARY_KEEP",
    "Decision",
    "KeepRates",
    "Responder",
    "answer_probe",
    "kept_facts",
    "summary_text",
    "tool_call_id",
]

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


@dataclass(frozen=True, slots=True)
class KeepRates:
    """How likely a simulated summary keeps a planted fact present in its input."""

    decision: float
    """A decision in the user's words."""
    error: float
    """An error message (a failing command's output)."""
    number: float
    """A number in a tool's output."""
    file: float
    """A value inside a file's content (a ``write``'s argument or a ``read``'s result)."""
    carry: float
    """A fact already in the previous summary, kept by the updated one."""

    def of(self, kind: str) -> float:
        rate: float = getattr(self, kind)
        return rate


SUMMARY_KEEP: dict[str, KeepRates] = {
    "none": KeepRates(decision=0.0, error=0.0, number=0.0, file=0.0, carry=0.0),
    "pessimistic": KeepRates(decision=0.6, error=0.35, number=0.15, file=0.1, carry=0.7),
    "plausible": KeepRates(decision=0.9, error=0.6, number=0.35, file=0.25, carry=0.85),
    "optimistic": KeepRates(decision=1.0, error=0.9, number=0.7, file=0.6, carry=0.95),
}
"""The named settings of ``--summary-keep`` (benchmarks/README.md says why these numbers)."""
DEFAULT_SUMMARY_KEEP = "plausible"

_PREVIOUS = re.compile(r"<previous-summary>(.*?)</previous-summary>|<summary>(.*?)</summary>", re.S)


def _draw(seed: int, fact: str, request: int, what: str) -> float:
    """A number in [0, 1) fixed by (seed, fact, summary request, what is drawn for)."""
    key = f"{seed}\0{fact}\0{request}\0{what}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2**64


def kept_facts(
    text: str, probes: Sequence[Probe], rates: KeepRates, *, seed: int, request: int
) -> list[Probe]:
    """The planted facts a summary of ``text`` (a summary request's whole input) keeps.

    A fact inside the previous summary (pi's ``<previous-summary>`` tags, or the
    ``<summary>`` message an agent puts at the head of a compacted conversation) is kept with
    ``rates.carry``; a fact elsewhere in the input with its kind's rate; a fact in both is
    kept if either draw keeps it. ``request`` numbers the summary requests of the run, so
    each compaction draws afresh."""
    previous = " ".join(a or b for a, b in _PREVIOUS.findall(text))
    rest = _PREVIOUS.sub(" ", text)
    kept: list[Probe] = []
    for probe in probes:
        carried = probe.fact in previous and (
            _draw(seed, probe.fact, request, "carry") < rates.carry
        )
        fresh = probe.fact in rest and _draw(seed, probe.fact, request, "new") < rates.of(
            probe.kind
        )
        if carried or fresh:
            kept.append(probe)
    return kept


def _fact_line(probe: Probe) -> tuple[str, str]:
    """(section, line) a summary states ``probe``'s fact in."""
    if probe.kind == "decision":
        return "## Key Decisions", f"- **{probe.keywords}**: {probe.fact}"
    if probe.kind == "error":
        return "## Critical Context", f"- Error: {probe.keywords}: {probe.fact}"
    if probe.kind == "number":
        return "## Critical Context", f"- {probe.keywords}: {probe.fact}"
    return "## Critical Context", f"- {probe.path}: {probe.keywords.split()[0]} = {probe.fact}"


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


def summary_text(input_text: str, input_tokens: int, kept: Sequence[Probe] = ()) -> str:
    """A structured summary of about ``input_tokens / SUMMARY_RATIO`` tokens (deterministic)
    that states the ``kept`` facts (under Key Decisions or Critical Context)."""
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
    facts = [_fact_line(probe) for probe in kept]
    lines += [line for section, line in facts if section == "## Key Decisions"]
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
    ]
    critical = [line for section, line in facts if section == "## Critical Context"]
    lines += critical or ["(none)"]
    return "\n".join(lines)


class Responder:
    def __init__(self, workload: Workload, summary_keep: str = DEFAULT_SUMMARY_KEEP) -> None:
        self.workload = workload
        self.keep = SUMMARY_KEEP[summary_keep]
        self.probes = [p.probe for p in workload.prompts if p.probe is not None]
        self.summaries = 0
        """Summary requests answered so far (numbers the draws of :func:`kept_facts`)."""

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
            self.summaries += 1
            kept = kept_facts(
                conv.text, self.probes, self.keep, seed=self.workload.seed, request=self.summaries
            )
            return Decision(Reply(summary_text(input_text, input_tokens, kept)), -1, "summary")
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
