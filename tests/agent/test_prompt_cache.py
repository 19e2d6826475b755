"""Cache accounting: fingerprints, miss causes, hit ratio."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from pi_context.agent.stats import CacheTracker, fingerprint_request, first_divergence
from pi_context.events import CacheUpdate
from pi_context.messages import Message, empty_usage, user_message
from pi_context.model import ModelInfo
from pi_context.testing import ScriptedModel, reply

from .conftest import MakeSession


def system(sections: dict[str, Any], **extra: Any) -> Message:
    return cast(
        Message, {"role": "system", "content": "", "sections": sections, "timestamp": 1, **extra}
    )


def usage(read: int = 0, write: int = 0, inp: int = 10) -> Any:
    u = empty_usage()
    u["input"], u["cacheRead"], u["cacheWrite"] = inp, read, write
    return u


def test_appending_messages_is_not_a_divergence() -> None:
    base = [system({"preamble": "P", "cwd": "C"}), user_message("a", timestamp=1)]
    longer = [*base, user_message("b", timestamp=2)]
    assert first_divergence(fingerprint_request(base), fingerprint_request(longer)) is None


def test_changed_section_is_named() -> None:
    a = [system({"preamble": "P", "skills": "S1", "cwd": "C"}), user_message("a", timestamp=1)]
    b = [system({"preamble": "P", "skills": "S2", "cwd": "C"}), user_message("a", timestamp=1)]
    assert first_divergence(fingerprint_request(a), fingerprint_request(b)) == "section:skills"


def test_inserted_section_in_collapsed_prompt_is_named() -> None:
    a = [system({"preamble": "P", "cwd": "C"}), user_message("a", timestamp=1)]
    b = [*a, system({"skills": "S"}), user_message("b", timestamp=2)]
    # Delivered in place, the patch only extends the request.
    assert first_divergence(fingerprint_request(a), fingerprint_request(b)) is None
    # Collapsed into the leading prompt, the new section breaks the prefix.
    cause = first_divergence(
        fingerprint_request(a, collapse=True), fingerprint_request(b, collapse=True)
    )
    assert cause == "section:skills"


def test_edited_message_is_named() -> None:
    a = [system({"preamble": "P"}), user_message("a", timestamp=1), user_message("b", timestamp=2)]
    b = [system({"preamble": "P"}), user_message("a", timestamp=1), user_message("B", timestamp=2)]
    assert first_divergence(fingerprint_request(a), fingerprint_request(b)) == "message:2:user"


def test_tools_change_is_named() -> None:
    msgs = [user_message("a", timestamp=1)]
    t1 = [{"name": "read", "description": "r", "parameters": {}}]
    t2 = [{"name": "read", "description": "r2", "parameters": {}}]
    cause = first_divergence(
        fingerprint_request(msgs, t1),  # type: ignore[arg-type]
        fingerprint_request(msgs, t2),  # type: ignore[arg-type]
    )
    assert cause == "tools"


def test_tracker_reports_misses_and_hit_ratio() -> None:
    tracker = CacheTracker()
    a = [system({"preamble": "P", "cwd": "C"}), user_message("a", timestamp=1)]
    first = tracker.record(a, (), usage(write=100))
    assert not first.miss
    b = [*a, user_message("b", timestamp=2)]
    hit = tracker.record(b, (), usage(read=100, write=20))
    assert not hit.miss
    c = [system({"preamble": "P2", "cwd": "C"}), user_message("a", timestamp=1)]
    miss = tracker.record(c, (), usage(write=130))
    assert miss.miss
    assert miss.miss_cause == "section:preamble"
    same = tracker.record(c, (), usage(read=0, write=130))
    assert same.miss_cause == "unchanged prefix"
    assert tracker.hit_ratio == 100 / (10 + 100 + 10 + 100 + 20 + 10 + 130 + 10 + 130)


def test_no_cache_reporting_means_no_misses() -> None:
    tracker = CacheTracker()
    for text in ("a", "b"):
        record = tracker.record([user_message(text, timestamp=1)], (), usage())
        assert not record.miss
    assert tracker.hit_ratio == 0.0


@given(st.lists(st.text(max_size=5), min_size=1, max_size=6), st.integers(min_value=0, max_value=5))
def test_prefix_extension_never_diverges(texts: list[str], extra: int) -> None:
    msgs = [user_message(t, timestamp=i) for i, t in enumerate(texts)]
    more = msgs + [user_message("x", timestamp=100 + i) for i in range(extra)]
    assert first_divergence(fingerprint_request(msgs), fingerprint_request(more)) is None


async def test_session_names_the_section_that_broke_the_cache(
    make_session: MakeSession, project_dir: Path
) -> None:
    info = ModelInfo(
        provider="scripted",
        id="scripted-model",
        api="scripted",
        context_window=128_000,
        max_tokens=1000,
    )
    model = ScriptedModel(
        [
            reply("one", input_tokens=5, cache_write=1000),
            reply("two", input_tokens=5, cache_read=1000, cache_write=10),
            reply("three", input_tokens=1015),
        ],
        model_info=info,
    )
    sess = await make_session(model)
    await sess.run("first")
    await sess.run("second")
    skill = project_dir / ".pi" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship it.\n---\nSteps.\n")
    await sess.reload()
    events = await sess.run("third")
    update = next(e for e in events if isinstance(e, CacheUpdate))
    assert update.miss_cause == "section:skills"
    assert update.to_json()["missCause"] == "section:skills"
    stats = sess.stats()
    assert stats.hit_ratio == 1000 / (5 + 1000 + 5 + 1000 + 10 + 1015)


def test_removed_section_is_named() -> None:
    a = [system({"preamble": "P", "docs": "D", "cwd": "C"}), user_message("a", timestamp=1)]
    b = [system({"preamble": "P", "cwd": "C"}), user_message("a", timestamp=1)]
    assert first_divergence(fingerprint_request(a), fingerprint_request(b)) == "section:docs"
