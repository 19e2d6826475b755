"""The offline summarizer: a deterministic summary in the standard structure, without a model.

It fills the same sections a model would (Goal; Constraints & Preferences; Progress with Done /
In Progress / Blocked; Key Decisions; Next Steps; Critical Context) from what the transcript
states outright: the user's requests (verbatim when short), sentences that read as constraints,
files read and modified, tool errors, the last request and whether work was left open, and
the assistant's last words. With a previous summary, its sections are carried over and the new
items merged in, so information accumulates across compactions as with the update prompt.

It is the default when no model is configured and the fallback after a model failure, so a
session at the window limit can always be compacted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pi_context.compaction.prompts import SPLIT_TURN_SEPARATOR
from pi_context.session.projection import convert_to_llm

__all__ = [
    "offline_branch_summary",
    "offline_history_summary",
    "offline_turn_prefix_summary",
]

_REQUEST_CHARS: Final = 400
_SNIPPET_CHARS: Final = 300
_MAX_ITEMS: Final = 12
_CONSTRAINT = re.compile(
    r"\b(must|never|always|don't|do not|should not|shouldn't|prefer|avoid|without|only use|make sure)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_FILE_BLOCK = re.compile(r"\n*<(read-files|modified-files)>\n.*?\n</\1>", re.DOTALL)

_ORDER: Final = (
    "Goal",
    "Constraints & Preferences",
    "Done",
    "In Progress",
    "Blocked",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        b.get("text", "") for b in content if isinstance(b, Mapping) and b.get("type") == "text"
    )


class _Facts:
    """What the transcript states, gathered in one pass."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.requests: list[str] = []
        self.constraints: list[str] = []
        self.errors: list[str] = []
        self.tool_counts: dict[str, int] = {}
        self.last_assistant_text = ""
        self.open_work = False
        summaries = [m for m in messages if m.get("role") in ("compactionSummary", "branchSummary")]
        self.embedded_summaries = [str(m.get("summary", "")) for m in summaries]
        for original, message in zip(messages, _converted(messages), strict=False):
            role = original.get("role")
            if role == "user":
                text = _text(message.get("content")).strip()
                if text:
                    self.requests.append(_clip(text, _REQUEST_CHARS))
                    for sentence in _SENTENCE.split(text):
                        if _CONSTRAINT.search(sentence):
                            self.constraints.append(_clip(sentence, 200))
                self.open_work = True
            elif role == "assistant":
                calls = 0
                for block in original.get("content") or []:
                    if isinstance(block, Mapping) and block.get("type") == "toolCall":
                        name = str(block.get("name", "?"))
                        self.tool_counts[name] = self.tool_counts.get(name, 0) + 1
                        calls += 1
                text = _text(original.get("content")).strip()
                if text:
                    self.last_assistant_text = text
                self.open_work = calls > 0 or original.get("stopReason") in (
                    "error",
                    "aborted",
                    "length",
                )
            elif role == "toolResult":
                if original.get("isError"):
                    first = _text(original.get("content")).strip().splitlines()
                    detail = _clip(first[0], 200) if first else "(no output)"
                    self.errors.append(f"`{original.get('toolName', '?')}` failed: {detail}")
                self.open_work = True
            elif role == "bashExecution":
                code = original.get("exitCode")
                if isinstance(code, int) and code != 0 and not isinstance(code, bool):
                    self.errors.append(
                        f"`{_clip(str(original.get('command', '')), 80)}` exited with code {code}"
                    )


def _converted(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Each message in its provider form (one per input; dropped ones become empty)."""
    out: list[Mapping[str, Any]] = []
    for message in messages:
        converted = convert_to_llm([message])
        out.append(converted[0] if converted else {})
    return out


def _parse_sections(summary: str) -> dict[str, list[str]]:
    """Bullet lines per heading of an earlier structured summary."""
    sections: dict[str, list[str]] = {}
    body, _, turn = summary.partition(SPLIT_TURN_SEPARATOR)
    body = _FILE_BLOCK.sub("", body)
    current: str | None = None
    loose: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            name = stripped.lstrip("#").strip()
            current = name if name in _ORDER else None
            if name == "Progress":
                current = None
            continue
        if not stripped or stripped == "(none)":
            continue
        if current is None:
            loose.append(stripped)
        else:
            sections.setdefault(current, []).append(stripped)
    extra = [line.strip() for line in _FILE_BLOCK.sub("", turn).splitlines() if line.strip()]
    extra = [line for line in extra if not line.startswith("#")]
    if loose or extra:
        sections.setdefault("Critical Context", []).extend(
            f"- Earlier: {_clip(line.lstrip('-* '), _SNIPPET_CHARS)}" for line in loose + extra
        )
    return sections


_TOOL_COUNTS: Final = "- [x] Tool calls so far: "
_STATE_PREFIXES: Final = (
    _TOOL_COUNTS,
    "- Files read: ",
    "- **Latest assistant conclusion**: ",
)
_COUNT = re.compile(r"(\S+) ×(\d+)")


def _tool_counts(line: str) -> dict[str, int]:
    return {name: int(n) for name, n in _COUNT.findall(line[len(_TOOL_COUNTS) :])}


def _replace_state(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    """Lines describing current state (tool counts, files read, latest conclusion) are
    replaced by their new version instead of accumulating; tool counts add up."""
    new_out = list(new)
    kept: list[str] = []
    for line in old:
        prefix = next((p for p in _STATE_PREFIXES if line.startswith(p)), None)
        replacement = next(
            (i for i, n in enumerate(new_out) if prefix and n.startswith(prefix)), None
        )
        if prefix is None or replacement is None:
            kept.append(line)
            continue
        if prefix == _TOOL_COUNTS:
            counts = _tool_counts(line)
            for name, n in _tool_counts(new_out[replacement]).items():
                counts[name] = counts.get(name, 0) + n
            new_out[replacement] = _TOOL_COUNTS + ", ".join(
                f"{name} ×{n}" for name, n in sorted(counts.items())
            )
    return kept, new_out


def _merge(old: list[str], new: list[str], *, keep_first: int = 0) -> list[str]:
    seen: set[str] = set()
    merged: list[str] = []
    for item in [*old, *new]:
        key = item.lstrip("-*0123456789.[]x ").strip()
        if key and key not in seen:
            seen.add(key)
            merged.append(item)
    if len(merged) > _MAX_ITEMS:
        head = merged[:keep_first]
        merged = head + merged[len(merged) - (_MAX_ITEMS - keep_first) :]
    return merged


def _render(sections: dict[str, list[str]], *, critical: bool = True) -> str:
    def body(name: str) -> str:
        items = sections.get(name) or []
        return "\n".join(items) if items else "(none)"

    parts = [
        "## Goal\n" + body("Goal"),
        "## Constraints & Preferences\n" + body("Constraints & Preferences"),
        "## Progress\n### Done\n"
        + body("Done")
        + "\n\n### In Progress\n"
        + body("In Progress")
        + "\n\n### Blocked\n"
        + body("Blocked"),
        "## Key Decisions\n" + body("Key Decisions"),
        "## Next Steps\n" + body("Next Steps"),
    ]
    if critical:
        parts.append("## Critical Context\n" + body("Critical Context"))
    return "\n\n".join(parts)


def _new_sections(
    facts: _Facts, read_files: Sequence[str], modified_files: Sequence[str]
) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    requests = facts.requests
    goal = requests[:1] + requests[-4:] if len(requests) > 5 else requests
    sections["Goal"] = [f"- {r}" for r in dict.fromkeys(goal)]
    sections["Constraints & Preferences"] = [f"- {c}" for c in dict.fromkeys(facts.constraints)][:6]
    done = [f"- [x] Modified `{path}`" for path in modified_files]
    if facts.tool_counts:
        counts = ", ".join(f"{name} ×{n}" for name, n in sorted(facts.tool_counts.items()))
        done.append(f"- [x] Tool calls so far: {counts}")
    sections["Done"] = done
    last_request = requests[-1] if requests else None
    if facts.open_work and last_request:
        sections["In Progress"] = [f"- [ ] {last_request}"]
    sections["Blocked"] = [f"- {e}" for e in facts.errors[-5:]]
    if facts.last_assistant_text:
        sections["Key Decisions"] = [
            f"- **Latest assistant conclusion**: {_clip(facts.last_assistant_text, _SNIPPET_CHARS)}"
        ]
    if facts.open_work and last_request:
        sections["Next Steps"] = [f"1. Continue with the latest request: {last_request}"]
    else:
        sections["Next Steps"] = ["1. Wait for the user's next request."]
    critical: list[str] = []
    if read_files:
        critical.append("- Files read: " + ", ".join(f"`{p}`" for p in read_files[:20]))
    for summary in facts.embedded_summaries[-2:]:
        critical.append(f"- Earlier summary: {_clip(_FILE_BLOCK.sub('', summary), _SNIPPET_CHARS)}")
    sections["Critical Context"] = critical
    return sections


def offline_history_summary(
    messages: Sequence[Mapping[str, Any]],
    previous_summary: str | None,
    read_files: Sequence[str],
    modified_files: Sequence[str],
    custom_instructions: str | None = None,
) -> str:
    """The structured summary of ``messages``, merged into ``previous_summary`` when given."""
    facts = _Facts(messages)
    new = _new_sections(facts, read_files, modified_files)
    if previous_summary:
        old = _parse_sections(previous_summary)
        merged: dict[str, list[str]] = {}
        finished: list[str] = []
        if not new.get("In Progress"):
            # nothing is open any more: what was in progress is done now
            finished = [
                "- [x] " + item.lstrip("-* ").removeprefix("[ ]").strip()
                for item in old.get("In Progress", [])
            ]
        for name in _ORDER:
            if name in old and name in new:
                old[name], new[name] = _replace_state(old[name], new[name])
            if name in ("In Progress", "Next Steps"):
                merged[name] = new.get(name, [])  # the current state replaces the old one
            elif name == "Done":
                merged[name] = _merge(old.get(name, []), [*finished, *new.get(name, [])])
            else:
                merged[name] = _merge(old.get(name, []), new.get(name, []), keep_first=1)
        new = merged
    if custom_instructions:
        new.setdefault("Critical Context", []).append(
            f"- Requested focus: {_clip(custom_instructions, _SNIPPET_CHARS)}"
        )
    return _render(new)


def offline_turn_prefix_summary(messages: Sequence[Mapping[str, Any]]) -> str:
    """The checkpoint of the first part of a split turn."""
    facts = _Facts(messages)
    request = facts.requests[0] if facts.requests else "(not stated in the kept messages)"
    progress = [f"- Called {name} ×{n}" for name, n in sorted(facts.tool_counts.items())]
    progress += [f"- {e}" for e in facts.errors[-3:]]
    context = []
    if facts.last_assistant_text:
        context.append(f"- Assistant so far: {_clip(facts.last_assistant_text, _SNIPPET_CHARS)}")
    return (
        f"## Original Request\n{request}\n\n"
        f"## Progress So Far\n{chr(10).join(progress) or '(none)'}\n\n"
        f"## Context Needed to Continue\n{chr(10).join(context) or '(none)'}"
    )


def offline_branch_summary(
    messages: Sequence[Mapping[str, Any]],
    read_files: Sequence[str],
    modified_files: Sequence[str],
) -> str:
    """A branch summary in the branch structure (no Critical Context section)."""
    facts = _Facts(messages)
    sections = _new_sections(facts, read_files, modified_files)
    return _render(sections, critical=False)
