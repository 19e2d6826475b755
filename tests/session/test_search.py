"""Session.search: ranking, what replaced a hit, branches, filters and hostile queries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_context.messages import (
    AssistantMessage,
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.session import SearchHit, Session
from pi_context.session.search.query import (
    make_snippet,
    match_expression,
    query_phrases,
    query_terms,
)
from pi_context.testing import FixedClock, SequentialIds


def _assistant(*blocks: Any) -> AssistantMessage:
    return assistant_message(list(blocks), api="test", provider="test", model="m")


def _session(path: Path) -> Session:
    return Session.create(path, cwd="/work", ids=SequentialIds(), clock=FixedClock())


@pytest.fixture
def history(tmp_path: Path) -> tuple[Session, dict[str, str]]:
    """A coding session with one compaction: early facts are replaced, late ones kept."""
    s = _session(tmp_path / "s.jsonl")
    ids: dict[str, str] = {}
    ids["decision"] = s.append_message(
        user_message("We decided the staging deploy listens on port 8443, never 8080.")
    ).id
    ids["call"] = s.append_message(
        _assistant(
            {"type": "thinking", "thinking": "I should look at the gateway configuration."},
            tool_call("c1", "read", {"path": "src/gateway/settings.toml"}),
        )
    ).id
    ids["result"] = s.append_message(
        tool_result_message("c1", "read", [text_block("timeout_ms = 2750\nretries = 4")])
    ).id
    ids["answer"] = s.append_message(_assistant(text_block("The gateway timeout is 2750 ms."))).id
    ids["kept"] = s.append_message(user_message("Now port the retry loop to asyncio.")).id
    ids["compaction"] = s.append_compaction(
        "The user set up the okapi gateway.", ids["kept"], 1000
    ).id
    ids["late"] = s.append_message(_assistant(text_block("Ported; the port stays 8443."))).id
    return s, ids


def test_ranked_hits_carry_entry_role_time_snippet_and_replacement(
    history: tuple[Session, dict[str, str]], tmp_path: Path
) -> None:
    s, ids = history
    hits = s.search("port 8443", cache_dir=tmp_path / "cache")
    assert [h.id for h in hits][:2] == [ids["decision"], ids["late"]] or [h.id for h in hits][
        :2
    ] == [ids["late"], ids["decision"]]
    by_id = {h.id: h for h in hits}
    decision = by_id[ids["decision"]]
    assert decision.role == "user"
    assert decision.replaced_by == ids["compaction"]
    assert decision.timestamp is not None
    assert decision.timestamp.startswith("2026-01-01T")
    assert "8443" in decision.snippet
    assert by_id[ids["late"]].replaced_by is None
    assert by_id[ids["kept"]].replaced_by is None  # "port" (stemmed) in the kept prompt
    # the entry holding both words outranks those holding one
    assert by_id[ids["kept"]].score < min(decision.score, by_id[ids["late"]].score)
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_every_kind_of_text_is_searchable(
    history: tuple[Session, dict[str, str]], tmp_path: Path
) -> None:
    s, ids = history
    cache = tmp_path / "cache"
    assert next(h.id for h in s.search("gateway configuration", cache_dir=cache)) == ids["call"]
    assert [h.id for h in s.search("settings.toml", cache_dir=cache)] == [ids["call"]]
    assert [h.id for h in s.search("timeout_ms", cache_dir=cache)] == [ids["result"]]
    hit = s.search("2750", cache_dir=cache, roles={"toolResult"})
    assert [(h.id, h.role) for h in hit] == [(ids["result"], "toolResult")]
    summary = s.search("okapi", cache_dir=cache)
    assert [(h.id, h.role) for h in summary] == [(ids["compaction"], "compactionSummary")]


def test_only_replaced_keeps_what_the_model_no_longer_sees(
    history: tuple[Session, dict[str, str]], tmp_path: Path
) -> None:
    s, ids = history
    hits = s.search("port", only_replaced=True, cache_dir=tmp_path / "c")
    assert [h.id for h in hits] == [ids["decision"]]
    assert not hits[0].in_context


def test_second_compaction_replaces_the_first_and_what_it_kept(tmp_path: Path) -> None:
    s = _session(tmp_path / "s.jsonl")
    a = s.append_message(user_message("alpha fact")).id
    b = s.append_message(user_message("bravo fact")).id
    c1 = s.append_compaction("summary one mentions alpha", b, 10).id
    c = s.append_message(user_message("charlie fact")).id
    system = s.append_message({"role": "system", "content": "system fact", "timestamp": 1}).id
    d = s.append_message(user_message("delta fact")).id
    c2 = s.append_compaction("summary two", d, 10).id
    hits = {h.id: h.replaced_by for h in s.search("fact alpha", cache_dir=tmp_path / "c")}
    assert hits[a] == c1
    assert hits[b] == c2
    assert hits[c] == c2
    assert hits[system] == c2
    assert hits[d] is None
    assert hits[c1] == c2  # only the newest compaction speaks


def test_context_edit_replaces_its_target(tmp_path: Path) -> None:
    s = _session(tmp_path / "s.jsonl")
    s.append_message(user_message("run the suite"))
    s.append_message(_assistant(tool_call("t", "bash", {"command": "pytest"})))
    result = s.append_message(
        tool_result_message("t", "bash", [text_block("FAILED test_quokka_parser")])
    ).id
    edit = s.append_context_edit(result, {"content": "[masked]"}).id
    hits = s.search("quokka", cache_dir=tmp_path / "c")
    assert [(h.id, h.replaced_by) for h in hits] == [(result, edit)]


def test_branches_and_branch_summaries(tmp_path: Path) -> None:
    s = _session(tmp_path / "s.jsonl")
    root = s.append_message(user_message("start the walrus project")).id
    left = s.append_message(_assistant(text_block("walrus plan A uses redis"))).id
    left2 = s.append_message(user_message("walrus plan A failed")).id
    summary = s.append_branch_summary(left2, "tried walrus plan A", parent_id=root).id
    right = s.append_message(_assistant(text_block("walrus plan B uses sqlite"))).id
    on_branch = s.search("walrus", cache_dir=tmp_path / "c")
    assert {h.id for h in on_branch} == {root, summary, right}
    assert all(h.on_branch for h in on_branch)
    everywhere = {h.id: h for h in s.search("walrus", all_branches=True, cache_dir=tmp_path / "c")}
    assert set(everywhere) == {root, left, left2, summary, right}
    assert everywhere[left].replaced_by == summary
    assert everywhere[left2].replaced_by == summary
    assert not everywhere[left].on_branch
    assert everywhere[root].replaced_by is None
    # searched from the other leaf, the left branch is the branch
    from_left = {h.id for h in s.search("walrus", leaf_id=left2, cache_dir=tmp_path / "c")}
    assert from_left == {root, left, left2}


def test_limit_and_no_match(history: tuple[Session, dict[str, str]], tmp_path: Path) -> None:
    s, _ = history
    cache = tmp_path / "c"
    assert len(s.search("port", limit=1, cache_dir=cache)) == 1
    assert s.search("port", limit=0, cache_dir=cache) == []
    assert s.search("xylophone", cache_dir=cache) == []
    assert s.search("  ...  ", cache_dir=cache) == []


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "NEAR(port 8443)",
        "text: port",
        "port*",
        "AND OR NOT",
        "port) OR (",
        "^port",
        "'; DROP TABLE entries; --",
        "\x00\x1b[31mport",
    ],
)
def test_hostile_queries_are_plain_words(
    history: tuple[Session, dict[str, str]], tmp_path: Path, query: str
) -> None:
    s, _ = history
    hits = s.search(query, cache_dir=tmp_path / "c")
    assert all(isinstance(h, SearchHit) for h in hits)
    assert s.search("port", cache_dir=tmp_path / "c")  # the index is intact


def test_hostile_text_is_found_and_returned_as_written(tmp_path: Path) -> None:
    s = _session(tmp_path / "s.jsonl")
    nasty = "\x1b]0;owned\x07 \x1b[2J marker\u202e \x00 \ud800"
    entry = s.append_message(user_message(nasty)).id
    hits = s.search("marker", cache_dir=tmp_path / "c")
    assert [h.id for h in hits] == [entry]
    assert "\x1b[2J" in hits[0].snippet  # raw: the CLI escapes it, the library does not


def test_in_memory_session_is_searchable_and_grows(tmp_path: Path) -> None:
    s = Session.in_memory("/w", ids=SequentialIds(), clock=FixedClock())
    first = s.append_message(user_message("the capybara key is 7731")).id
    assert [h.id for h in s.search("capybara")] == [first]
    second = s.append_message(user_message("capybara again")).id
    assert {h.id for h in s.search("capybara")} == {first, second}
    assert s.search_index().rebuilds == 1


def test_unwritable_cache_dir_falls_back_to_memory(
    history: tuple[Session, dict[str, str]], tmp_path: Path
) -> None:
    s, ids = history
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    hits = s.search("8443", cache_dir=blocker / "cache")
    assert ids["decision"] in {h.id for h in hits}
    assert s.search_index(blocker / "cache").database is None


def test_to_json_names_fields_as_the_session_format() -> None:
    hit = SearchHit("a", "user", "t", "snip", 1.23456789, "c", True)
    assert hit.to_json() == {
        "id": "a",
        "role": "user",
        "timestamp": "t",
        "snippet": "snip",
        "score": 1.234568,
        "replacedBy": "c",
    }


def test_query_terms_and_expression() -> None:
    assert query_terms("Port port, 8443!  naïve") == ["port", "8443", "naïve"]
    assert query_phrases("src/app.py port Port") == [["src", "app", "py"], ["port"]]
    assert match_expression([["a"], ["b", 'c"']]) == '"a" OR "b c"""'
    assert len(query_terms(" ".join(f"w{i}" for i in range(100)))) == 32


def test_snippet_centres_on_the_first_match_and_marks_cuts() -> None:
    text = "x " * 300 + "the needle is here " + "y " * 300
    snippet = make_snippet(text, ["needle"], 60)
    assert snippet.startswith("…")
    assert snippet.endswith("…")
    assert "needle" in snippet
    assert len(snippet) <= 62
    assert make_snippet("short  text\n\nhere", ["text"]) == "short text here"
    # a stemmed match places the snippet on the word's stem
    assert "errored" in make_snippet("z " * 200 + "it errored out", ["erroring"], 40)
