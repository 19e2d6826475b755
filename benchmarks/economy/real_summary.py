"""Real summaries on the side (``--summary-url URL --summary-model ID``).

The simulator still answers every summary request with its own summary (so a run's requests,
costs and probes are those of its ``--summary-keep`` setting); in addition, each summary
request whose input holds a planted fact is sent to a real OpenAI-compatible server (only
those requests: no turn, no tool call), with the contender's own system prompt and prompt,
and the reply is searched for each planted fact that the text sent held. The records
(request number, kind, where the fact was: ``new`` in the transcript or ``carry`` in the
previous summary, kept or not) go into the run as ``real_summaries``.

A small model's window is smaller than the requests: a prompt longer than
:attr:`RealSummarizer.window` leaves (at 3 characters a token) keeps its first third and last
two thirds, and only the facts in the text actually sent are counted.

A stopped run keeps what it measured: each record is appended to the unit's log as it is made,
and a re-run of the unit (:func:`carry_over`) sends again only the summary requests it has no
answer for. The simulated run is deterministic, so the re-run makes the same summary requests;
one whose number and sent text (its ``digest``) match a measured one takes that one's records
instead of asking the model again.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.economy.responder import KeepRates, kept_facts
from benchmarks.economy.server import Simulator
from benchmarks.economy.wire import anthropic_conversation, openai_conversation
from benchmarks.economy.workload import Probe

__all__ = [
    "ObservedSimulator",
    "RealSummarizer",
    "carry_over",
    "fact_places",
    "kept_rates",
    "read_measured",
    "system_text",
]

Measured = dict[tuple[int, str], list[dict[str, Any]]]
"""Records of summary requests already answered, by (request number, digest)."""

_CARRIED = KeepRates(decision=0.0, error=0.0, number=0.0, file=0.0, carry=1.0)
_NEW = KeepRates(decision=1.0, error=1.0, number=1.0, file=1.0, carry=0.0)

_CUT_NOTE = "\n\n[... {count} characters left out to fit the model's window]\n\n"


def system_text(body: Mapping[str, Any]) -> str:
    """The system prompt of an Anthropic or OpenAI request body."""
    system = body.get("system")
    parts: list[str] = []
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts += [str(b.get("text", "")) for b in system if isinstance(b, dict)]
    for message in body.get("messages") or []:
        if message.get("role") in ("system", "developer"):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [str(b.get("text", "")) for b in content if isinstance(b, dict)]
    return "\n\n".join(parts)


def fact_places(text: str, probes: Sequence[Probe]) -> list[tuple[Probe, str]]:
    """Each planted fact in ``text`` with where it is, as the simulated summarizer sees it:
    ``carry`` (inside the previous summary) and/or ``new`` (anywhere else)."""
    carried = kept_facts(text, probes, _CARRIED, seed=0, request=0)
    new = kept_facts(text, probes, _NEW, seed=0, request=0)
    return [(p, "carry") for p in carried] + [(p, "new") for p in new]


def cut_to_fit(text: str, chars: int) -> str:
    """``text``, or its first third and last two thirds of ``chars`` characters with a note."""
    if len(text) <= chars:
        return text
    keep = max(0, chars - len(_CUT_NOTE) - 12)
    head = keep // 3
    tail = keep - head
    note = _CUT_NOTE.format(count=len(text) - head - tail)
    return text[:head] + note + text[len(text) - tail :]


@dataclass(slots=True)
class RealSummarizer:
    url: str
    """The server's OpenAI base URL, e.g. ``http://127.0.0.1:8080/v1``."""
    model: str
    window: int = 8192
    max_tokens: int = 512
    timeout: float = 900.0
    log: Path | None = None
    """A JSON-lines file each record is also appended to as it is made (a long run can be
    stopped and still read)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    measured: Measured = field(default_factory=dict)
    """Records of an earlier run of the same unit (:func:`carry_over`): a request found here
    is not sent again."""

    def _record(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.log is not None:
            with self.log.open("a") as out:
                out.write(json.dumps(record) + "\n")

    def observe(self, system: str, prompt: str, probes: Sequence[Probe], request: int) -> None:
        """Send one summary request if its prompt holds a planted fact; record what was kept."""
        chars = max(1000, (self.window - self.max_tokens - 256) * 3 - len(system))
        sent = cut_to_fit(prompt, chars)
        places = fact_places(sent, probes)
        if not places:
            return
        digest = request_digest(self.model, self.max_tokens, system, sent)
        done = self.measured.get((request, digest))
        if done:
            for record in done:
                self._record(record)
            return
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": sent},
            ],
            "max_tokens": self.max_tokens,
            "temperature": 0,
        }
        request_body = json.dumps(body).encode()
        http = urllib.request.Request(
            f"{self.url.rstrip('/')}/chat/completions",
            data=request_body,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(http, timeout=self.timeout) as response:
                answer = json.loads(response.read())
            reply = str(answer["choices"][0]["message"].get("content") or "")
        except (OSError, urllib.error.URLError, ValueError, KeyError, IndexError) as exc:
            self._record({"request": request, "error": f"{type(exc).__name__}: {exc}"})
            return
        for probe, where in places:
            self._record(
                {
                    "request": request,
                    "kind": probe.kind,
                    "fact": probe.fact,
                    "where": where,
                    "kept": probe.fact in reply,
                    "cut": len(sent) < len(prompt),
                    "sent_chars": len(sent),
                    "prompt_chars": len(prompt),
                    "digest": digest,
                }
            )


def request_digest(model: str, max_tokens: int, system: str, sent: str) -> str:
    """A short hash of what decides the model's reply to one summary request."""
    text = json.dumps([model, max_tokens, system, sent])
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def read_measured(log: Path) -> Measured:
    """The answered requests' records in a JSON-lines log, by (request, digest).

    Failed requests and records without a digest (older logs) are left out, so they are sent
    again; a line cut short by a stopped run is skipped."""
    measured: Measured = {}
    if not log.exists():
        return measured
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or "kind" not in record or "digest" not in record:
            continue
        measured.setdefault((int(record["request"]), str(record["digest"])), []).append(record)
    return measured


def carry_over(log: Path) -> Measured:
    """Before a unit runs again: what its earlier runs measured, kept for the new run.

    The records of ``log`` (the stopped run's) and of ``<log>.previous.jsonl`` (the runs
    before) are merged into the latter, and ``log`` is started afresh; the new run writes
    every record of its own requests, reused ones included, to ``log``."""
    previous = log.with_name(log.name.removesuffix(".jsonl") + ".previous.jsonl")
    measured = read_measured(previous)
    measured.update(read_measured(log))
    if measured:
        lines = "".join(json.dumps(r) + "\n" for records in measured.values() for r in records)
        partial = previous.with_name(previous.name + ".tmp")
        partial.write_text(lines)
        partial.replace(previous)
    log.unlink(missing_ok=True)
    return measured


def kept_rates(records: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """(kept, present) per kind for new facts, and for ``carry`` (any kind) carried ones."""
    out: dict[str, tuple[int, int]] = {}
    for r in records:
        if "kind" not in r:
            continue
        key = "carry" if r["where"] == "carry" else r["kind"]
        kept, present = out.get(key, (0, 0))
        out[key] = (kept + bool(r["kept"]), present + 1)
    return out


@dataclass(slots=True)
class ObservedSimulator(Simulator):
    """The simulator, with every summary request it answers also measured by ``real``."""

    real: RealSummarizer | None = None

    def handle(self, path: str, body: dict[str, Any]) -> Any:
        before = len(self.records)
        outcome = Simulator.handle(self, path, body)
        new = self.records[before:]
        if self.real is not None and new and new[-1].kind == "summary":
            is_anthropic = path.rstrip("/").endswith("/messages")
            conv = anthropic_conversation(body) if is_anthropic else openai_conversation(body)
            self.real.observe(
                system_text(body),
                conv.last_user_text,
                self.responder.probes,
                self.responder.summaries,
            )
        return outcome


def real_summary_line(run: Mapping[str, Any]) -> str:
    """``contender: kind kept/present, ...`` for a run measured with ``--summary-url``."""
    records = run.get("real_summaries") or []
    rates = kept_rates(records)
    errors = sum(1 for r in records if "error" in r)
    sent = len({r["request"] for r in records})
    sizes = {
        r["request"]: (r["sent_chars"], r["prompt_chars"]) for r in records if "sent_chars" in r
    }
    parts = [
        f"{key} {kept}/{present}"
        for key in ("decision", "error", "number", "file", "carry")
        if key in rates
        for kept, present in [rates[key]]
    ]
    line = (
        f"{run['contender']}: {sent} summary requests sent, {errors} failed; kept / present: "
        + (", ".join(parts) or "no planted fact in any request sent")
    )
    if sizes:
        shares = sorted(s / p for s, p in sizes.values())
        whole = sum(1 for s, p in sizes.values() if s >= p)
        line += (
            f"; {whole} of {len(sizes)} prompts sent whole, share of a prompt's characters "
            f"sent {shares[0]:.0%}-{shares[-1]:.0%} (median {shares[len(shares) // 2]:.0%})"
        )
    return line
