"""Session locations and picking, as pi 1.6.0 lays them out."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import SessionError
from pi_context.session_dirs import (
    SESSION_ID_PATTERN,
    default_session_dir,
    encode_cwd,
    find_latest_session,
    last_activity_ms,
    list_sessions,
    looks_like_path,
    new_session_path,
    read_header,
    read_session_info,
    resolve_session_arg,
    session_dir,
    session_file_name,
)
from tests.helpers import write_session_in


def test_encode_cwd_matches_pi_example() -> None:
    assert encode_cwd("/home/u/proj") == "--home-u-proj--"
    assert encode_cwd("/a:b/c") == "--a-b-c--"


def test_default_dir_and_file_name() -> None:
    agent = Path("/x/agent")
    assert default_session_dir("/home/u/proj", agent) == Path("/x/agent/sessions/--home-u-proj--")
    assert (
        session_file_name("2026-01-05T10:00:00.000Z", "abc") == "2026-01-05T10-00-00-000Z_abc.jsonl"
    )


def test_default_agent_dir_expands_home_in_the_variable(tmp_path: Path) -> None:
    home = str(Path.home())
    env = {"PI_CODING_AGENT_DIR": "~/pi"}
    assert session_dir("/p", env=env) == Path(home) / "pi" / "sessions" / "--p--"
    assert session_dir("/p", env={}) == Path(home) / ".pi" / "agent" / "sessions" / "--p--"


def test_session_dir_precedence(tmp_path: Path) -> None:
    env = {"PI_CODING_AGENT_SESSION_DIR": str(tmp_path / "env")}
    assert (
        session_dir("/p", agent=tmp_path, cli_dir=str(tmp_path / "cli"), env=env, setting="s")
        == tmp_path / "cli"
    )
    assert (
        session_dir("/p", agent=tmp_path, env=env, setting=str(tmp_path / "s")) == tmp_path / "env"
    )
    assert session_dir("/p", agent=tmp_path, env={}, setting=str(tmp_path / "s")) == tmp_path / "s"
    assert session_dir("/p", agent=tmp_path, env={}) == tmp_path / "sessions" / "--p--"


def test_new_session_path_is_named_after_a_fresh_uuid7(tmp_path: Path) -> None:
    before = time.time_ns() // 1_000_000
    path, sid, stamp = new_session_path(tmp_path)
    after = time.time_ns() // 1_000_000
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", sid)
    assert before <= int(sid.replace("-", "")[:12], 16) <= after
    assert SESSION_ID_PATTERN.match(sid)
    assert path == tmp_path / session_file_name(stamp, sid)


def test_new_session_path_rejects_bad_id(tmp_path: Path) -> None:
    path, sid, stamp = new_session_path(tmp_path, session_id="my.id")
    assert path.name.endswith("_my.id.jsonl")
    assert sid == "my.id"
    assert path.name.startswith(re.sub(r"[:.]", "-", stamp))
    with pytest.raises(SessionError):
        new_session_path(tmp_path, session_id="-bad")


def test_read_header_rules(tmp_path: Path) -> None:
    good = tmp_path / "g.jsonl"
    good.write_text(
        '{"type":"session"\n{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n'
    )
    assert read_header(good) == {
        "type": "session",
        "version": 3,
        "id": "x",
        "timestamp": "t",
        "cwd": "/",
    }
    bom = tmp_path / "b.jsonl"
    bom.write_bytes(
        b'\xef\xbb\xbf{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n'
    )
    assert read_header(bom) is None
    no_id = tmp_path / "n.jsonl"
    no_id.write_text('{"type":"session","version":3}\n')
    assert read_header(no_id) is None
    assert read_header(tmp_path / "missing.jsonl") is None


def test_conformance_degenerate_headers() -> None:
    data = Path(__file__).parent / "data" / "conformance" / "sessions" / "small"
    assert read_header(data / "tiny_malformed_then_header.jsonl") is not None
    for name in ("tiny_bom_header", "tiny_header_without_id", "tiny_no_header", "tiny_empty"):
        assert read_header(data / f"{name}.jsonl") is None, name


def test_session_info_counts_and_name(tmp_path: Path) -> None:
    path = write_session_in(
        tmp_path,
        "s1",
        messages=(
            ("user", "hello\nworld", 1_800_000_000_000),
            ("assistant", "hi", 1_800_000_000_500),
        ),
        name=" Named ",
    )
    info = read_session_info(path)
    assert info is not None
    assert (info.id, info.message_count, info.first_message, info.name) == (
        "s1",
        2,
        "hello world",
        "Named",
    )
    assert last_activity_ms(path) == 1_800_000_000_500


def test_last_activity_is_the_header_time_without_messages(tmp_path: Path) -> None:
    path = write_session_in(tmp_path, "s1", stamp="2026-01-05T10:00:00.000Z")
    assert last_activity_ms(path) == 1_767_607_200_000
    assert last_activity_ms(tmp_path / "missing.jsonl") == 0


def _write(
    path: Path, entries: list[dict[str, Any]], *, separators: tuple[str, str] = (",", ":")
) -> Path:
    header = {
        "type": "session",
        "version": 3,
        "id": path.stem,
        "timestamp": "2026-01-05T10:00:00.000Z",
        "cwd": "/work",
    }
    lines = [json.dumps(e, separators=separators) for e in [header, *entries]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _msg(eid: str, role: str, content: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": None,
        "timestamp": "2026-01-05T10:00:01.000Z",
        "message": {"role": role, "content": content, "timestamp": 1},
    }


ENTRIES = [
    _msg("1", "user", [{"type": "image", "data": "x"}]),  # no text: not the first message
    _msg("2", "user", [{"type": "text", "text": "  the\nfirst   question "}]),
    _msg(
        "3",
        "assistant",
        [
            {
                "type": "toolCall",
                "id": "t",
                "name": "bash",
                "arguments": {"command": 'echo "role":"user"'},
            }
        ],
    ),
    _msg("4", "toolResult", [{"type": "text", "text": "x" * 100_000}]),
    {"type": "session_info", "id": "5", "parentId": "4", "name": "old name"},
    _msg("6", "user", "a plain string"),
    {"type": "session_info", "id": "7", "parentId": "6", "name": "  new name  "},
]


def test_session_info_reads_only_what_pi_wrote_where_it_wrote_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "s1.jsonl", ENTRIES)
    info = read_session_info(path)
    assert info is not None
    assert (info.id, info.cwd, info.created) == ("s1", "/work", "2026-01-05T10:00:00.000Z")
    assert info.name == "new name"  # the last session_info, stripped
    assert info.first_message == "the first question"  # not the image, not the tool's text
    assert info.message_count == 4


def test_other_json_spacing_is_read_too(tmp_path: Path) -> None:
    for separators in ((", ", ": "), (" , ", " : ")):
        path = _write(tmp_path / "spaced.jsonl", ENTRIES, separators=separators)
        info = read_session_info(path)
        assert info is not None
        assert (info.name, info.first_message) == ("new name", "the first question")
        assert info.message_count == 4


def test_not_a_session_and_empty_sessions(tmp_path: Path) -> None:
    (tmp_path / "junk.jsonl").write_text("not json\n")
    assert read_session_info(tmp_path / "junk.jsonl") is None
    empty = _write(tmp_path / "empty.jsonl", [])
    info = read_session_info(empty)
    assert info is not None
    assert (info.name, info.first_message, info.message_count) == (None, "", 0)
    os.mkfifo(tmp_path / "fifo.jsonl")
    assert read_session_info(tmp_path / "fifo.jsonl") is None  # never blocks on a FIFO


def test_continue_picks_newest_mtime_with_header(tmp_path: Path) -> None:
    old = write_session_in(tmp_path, "old", mtime=1000)
    write_session_in(tmp_path, "new", mtime=2000, cwd="/other")
    broken = tmp_path / "zzz.jsonl"
    broken.write_text("not json\n")
    os.utime(broken, (3000, 3000))
    assert find_latest_session(tmp_path) == tmp_path / session_file_name(
        "2026-01-05T10:00:00.000Z", "new"
    )
    assert find_latest_session(tmp_path, cwd="/home/u/proj") == old
    assert find_latest_session(tmp_path / "none") is None
    assert [info.id for info in list_sessions(tmp_path)] == ["new", "old"]


def test_looks_like_path() -> None:
    assert looks_like_path("a/b")
    assert looks_like_path("x.jsonl")
    assert looks_like_path("a\\b")
    assert not looks_like_path("0194abcd")


def test_resolve_id_exact_then_prefix_local_first(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    here = default_session_dir("/home/u/proj", agent)
    there = default_session_dir("/home/u/other", agent)
    recent = write_session_in(
        here, "abc-2", messages=(("user", "b", 1_800_000_000_200),), mtime=1_000
    )
    write_session_in(here, "abc-1", messages=(("user", "a", 1_800_000_000_100),), mtime=2_000)
    exact = write_session_in(here, "abc", messages=(("user", "c", 50),))
    foreign = write_session_in(there, "zed-9", cwd="/home/u/other")

    assert resolve_session_arg("abc", cwd="/home/u/proj", directory=here, agent=agent).path == exact
    assert (
        resolve_session_arg("abc-", cwd="/home/u/proj", directory=here, agent=agent).path == recent
    )
    match = resolve_session_arg("zed", cwd="/home/u/proj", directory=here, agent=agent)
    assert (match.path, match.other_project, match.cwd) == (foreign, True, "/home/u/other")
    with pytest.raises(SessionError, match="No session found matching 'ABC'"):
        resolve_session_arg("ABC", cwd="/home/u/proj", directory=here, agent=agent)


def test_resolve_path_new_existing_and_invalid(tmp_path: Path) -> None:
    missing = resolve_session_arg(
        "new.jsonl", cwd=str(tmp_path), directory=tmp_path, agent=tmp_path
    )
    assert (missing.path, missing.exists) == (tmp_path / "new.jsonl", False)
    existing = write_session_in(tmp_path / "d", "s")
    found = resolve_session_arg(str(existing), cwd="/", directory=tmp_path, agent=tmp_path)
    assert found.exists
    assert found.cwd == "/home/u/proj"
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\n")
    with pytest.raises(SessionError, match="not a valid pi session"):
        resolve_session_arg(str(junk), cwd="/", directory=tmp_path, agent=tmp_path)


def test_fork_from_copies_entries_verbatim_under_a_new_header(tmp_path: Path) -> None:
    from pi_context.session_dirs import fork_from

    source = write_session_in(
        tmp_path / "a", "src", messages=(("user", "hi", 1), ("assistant", "yo", 2))
    )
    target_dir = tmp_path / "b"
    forked = fork_from(source, target_dir, cwd="/new/cwd")
    assert forked.parent == target_dir
    old_lines = source.read_bytes().split(b"\n")
    new_lines = forked.read_bytes().split(b"\n")
    assert new_lines[1:] == old_lines[1:]
    header = read_header(forked)
    assert header is not None
    assert header["cwd"] == "/new/cwd"
    assert header["parentSession"] == str(source)
    assert header["id"] != "src"
    assert forked.name.endswith(f"_{header['id']}.jsonl")
