"""Conformance runs compare with pi's own summary-wrapper sentences.

The product introduces compaction and branch summaries with its own sentences
(``pi_context.session.projection.SUMMARY_WRAPPERS``); the tags, separators and layout are pi's.
To compare transcripts with pi's outputs byte for byte, the suite reads pi's sentences out of the
``units/serialize`` golden (pi's own ``convertToLlm`` output; the repository's copy when the
folder under test has none) and swaps them in for its duration.
That this is the only difference is itself tested: ``test_summary_wrappers_differ_only_in_sentences``.
"""

from __future__ import annotations

import json

import pytest

from pi_context.session import projection
from tests.conformance.registry import REPO_COPY, find_golden, load_golden

_OPEN = "\n\n<summary>\n"


def pi_summary_wrappers() -> projection.SummaryWrappers:
    # pi's sentences are the same in every folder: a folder without the serialize golden (only
    # sessions, say) borrows them from the repository's copy
    path = find_golden("units/serialize") or REPO_COPY / "goldens" / "units" / "serialize.json"
    golden = load_golden(path)
    inputs = {name: json.loads(text) for name, text in golden["messagesJson"].items()}
    intros: dict[str, str] = {}
    for sequence in golden["sequences"].values():
        converted = iter(sequence.get("convertToLlm", []))
        for name in sequence["messages"]:
            message = inputs[name]
            role = message.get("role")
            if role not in ("compactionSummary", "branchSummary"):
                if role != "unknown_role" and not message.get("excludeFromContext"):
                    next(converted, None)
                continue
            text = next(converted)["content"][0]["text"]
            suffix = (
                projection.COMPACTION_SUMMARY_SUFFIX
                if role == "compactionSummary"
                else projection.BRANCH_SUMMARY_SUFFIX
            )
            tail = _OPEN + message["summary"] + suffix
            assert text.endswith(tail), f"unexpected {role} wrapper layout in pi's output"
            intros[role] = text[: -len(tail)]
    return projection.SummaryWrappers(
        compaction_intro=intros["compactionSummary"], branch_intro=intros["branchSummary"]
    )


@pytest.fixture(autouse=True)
def _pi_summary_wording(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projection, "SUMMARY_WRAPPERS", _PI_WRAPPERS)


_PI_WRAPPERS = pi_summary_wrappers()
