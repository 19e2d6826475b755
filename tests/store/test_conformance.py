"""One suite for every store: the same operations give the same loads, projections, contexts,
search hits and exports, whether the session lives in memory, in a file or in PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import InvalidEntryError, SessionFormatError, StoreError
from pi_context.session import Session
from pi_context.store import (
    LeafMovedError,
    SessionBusyError,
    SessionNotFoundError,
    SessionRef,
    SessionStore,
    open_store,
)
from tests.store.helpers import CONFORMANCE_SESSIONS, message

SESSIONS = CONFORMANCE_SESSIONS
NOT_SESSIONS = {
    # no header line a reader accepts, or a header without an id: nothing to key them by
    "tiny_bom_header.jsonl",
    "tiny_empty.jsonl",
    "tiny_header_without_id.jsonl",
    "tiny_no_header.jsonl",
    "tiny_whitespace.jsonl",
}


@pytest.fixture
def store(each_store: SessionStore) -> SessionStore:
    """Each kind of store in turn (``each_store``)."""
    return each_store


async def _fresh(store: SessionStore, tenant: str = "") -> SessionRef:
    return await store.create(tenant=tenant, cwd="/work", session_id="s-conf")


def _context(store_session: Session) -> list[Any]:
    return [json.dumps(m, sort_keys=True) for m in store_session.projection().messages]


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
async def test_import_export_is_byte_identical(
    store: SessionStore, path: Path, tmp_path: Path
) -> None:
    if path.name in NOT_SESSIONS:
        with pytest.raises(SessionFormatError, match=path.name):
            await store.import_jsonl(path)
        return
    ref = await store.import_jsonl(path, tenant="acme")
    out = tmp_path / "out.jsonl"
    await store.export_jsonl(ref, out)
    assert out.read_bytes() == path.read_bytes()
    # the loaded session is what the session package reads from the file itself
    stored = await store.load(ref)
    with Session.open(path) as original:
        loaded = stored.session()
        assert loaded.header == original.header
        if original.file_version >= 3:  # v1/v2 entries get fresh ids when read
            assert stored.header == original.header
            assert [e.id for e in loaded.entries] == [e.id for e in original.entries]
            assert loaded.leaf_id == original.leaf_id
        assert len(loaded.entries) == len(original.entries)
        assert _context(loaded) == _context(original)
        assert [p.line for p in stored.problems] == [p.line for p in original.problems]
    # importing the same bytes again is the same session
    assert await store.import_jsonl(path, tenant="acme") == ref


async def test_append_load_and_projection(store: SessionStore) -> None:
    ref = await _fresh(store)
    first = await store.append(ref, [message("u1", None, "user", "Tag the release v1.2")])
    assert first.leaf_id == "u1"
    assert first.seqs == (1,)
    second = await store.append(
        ref,
        [message("a1", "u1", "assistant", "Tagged."), message("u2", "a1", "user", "Thanks")],
        if_leaf="u1",
    )
    assert second.seqs == (2, 3)
    assert second.leaf_id == "u2"
    stored = await store.load(ref)
    assert [e["id"] for e in stored.entries] == ["u1", "a1", "u2"]
    assert stored.header["id"] == "s-conf"
    session = stored.session()
    assert [m["role"] for m in session.projection().messages] == ["user", "assistant", "user"]
    data = await store.export_bytes(ref)
    assert data.count(b"\n") == 4
    assert data.endswith(b"\n")


async def test_same_operations_same_results_everywhere(tmp_path: Path, pg_url: str) -> None:
    stores = [
        await open_store("memory:"),
        await open_store(tmp_path / "files"),
        await open_store(pg_url),
    ]
    try:
        results = []
        for store in stores:
            await store.migrate()
            ref = await store.import_jsonl(SESSIONS_BY_NAME["branched.jsonl"])
            leaf = (await store.load(ref)).leaf_id
            await store.append(
                ref,
                [message("n1", leaf, "user", "where is the release checklist")],
                if_leaf=leaf,
            )
            stored = await store.load(ref)
            hits = await store.search(ref, "release checklist", limit=5)
            all_hits = await store.search(ref, "summary", limit=50, all_branches=True)
            wide = await store.search_tenant("", "summary", limit=50, all_branches=True)
            results.append(
                (
                    await store.export_bytes(ref),
                    stored.entries,
                    _context(stored.session()),
                    [(h.id, h.role, h.replaced_by, h.on_branch, h.snippet) for h in hits],
                    sorted((h.id, h.replaced_by, h.on_branch) for h in all_hits),
                    sorted((h.ref, h.hit.id, h.hit.replaced_by, h.hit.on_branch) for h in wide),
                )
            )
        assert results[0] == results[1]
        # PostgreSQL ranks with ts_rank_cd, the files with BM25: the same hits, found alike
        assert results[2][:3] == results[0][:3]
        assert sorted(results[2][3]) == sorted(results[0][3])
        assert results[2][4] == results[0][4]
        # the tenant-wide search finds what the session's own search over all branches does
        assert results[2][5] == results[0][5] == [(ref, *hit) for hit in results[0][4]]
    finally:
        for store in stores:
            await store.aclose()


SESSIONS_BY_NAME = {p.name: p for p in SESSIONS}


async def test_if_leaf_refuses_a_moved_leaf(store: SessionStore) -> None:
    ref = await _fresh(store)
    await store.append(ref, [message("u1", None, "user", "one")])
    await store.append(ref, [message("a1", "u1", "assistant", "two")], if_leaf="u1")
    before = await store.export_bytes(ref)
    with pytest.raises(LeafMovedError):
        await store.append(ref, [message("a2", "u1", "assistant", "late")], if_leaf="u1")
    assert await store.export_bytes(ref) == before


async def test_writers_with_compare_and_swap_lose_nothing(store: SessionStore) -> None:
    ref = await store.create(cwd="/w", session_id="cas")
    await store.append(ref, [message("root", None, "user", "start")])
    stored: list[str] = []

    async def writer(name: str) -> None:
        for turn in range(6):
            while True:
                leaf = (await store.load(ref)).leaf_id
                entry = message(f"{name}-{turn}", leaf, "user", f"{name} {turn}")
                try:
                    await store.append(ref, [entry], if_leaf=leaf)
                except LeafMovedError:
                    continue
                stored.append(entry["id"])
                break

    await asyncio.gather(*(writer(f"w{i}") for i in range(4)))
    session = (await store.load(ref)).session()
    chain = [e.id for e in session.branch_entries()]
    assert sorted(chain[1:]) == sorted(stored)
    assert len(chain) == 25  # one chain: every append extended the leaf it saw
    assert session.problems == []


async def test_two_writers_on_one_parent_make_siblings(store: SessionStore) -> None:
    ref = await _fresh(store)
    await store.append(ref, [message("u1", None, "user", "one")])
    await asyncio.gather(
        store.append(ref, [message("a1", "u1", "assistant", "left")]),
        store.append(ref, [message("a2", "u1", "assistant", "right")]),
    )
    session = (await store.load(ref)).session()
    assert sorted(e.id for e in session.children("u1")) == ["a1", "a2"]


async def test_retry_with_the_same_bytes_returns_the_stored_result(store: SessionStore) -> None:
    ref = await _fresh(store)
    batch = [message("u1", None, "user", "one"), message("a1", "u1", "assistant", "two")]
    first = await store.append(ref, batch)
    again = await store.append(ref, batch, if_leaf=None)
    assert again == first
    assert len((await store.load(ref)).entries) == 2
    changed = [message("u1", None, "user", "other"), batch[1]]
    with pytest.raises(InvalidEntryError, match="already stored with other content"):
        await store.append(ref, changed)


@pytest.mark.parametrize(
    ("bad", "rule"),
    [
        ({"id": "x1", "parentId": None}, "no entry type"),
        ({"type": "message", "parentId": None}, "no entry id"),
        ({"type": "custom", "id": "x1", "parentId": "nope"}, "names no entry"),
        ({"type": "custom", "id": "x1", "parentId": 3}, "neither a string nor null"),
    ],
)
async def test_a_bad_entry_stores_nothing_of_the_batch(
    store: SessionStore, bad: dict[str, Any], rule: str
) -> None:
    ref = await _fresh(store)
    await store.append(ref, [message("u1", None, "user", "one")])
    before = await store.export_bytes(ref)
    with pytest.raises(InvalidEntryError, match=rule) as caught:
        await store.append(ref, [message("a1", "u1", "assistant", "fine"), bad])
    assert "entry 2 of the batch" in str(caught.value)
    assert await store.export_bytes(ref) == before


async def test_other_tenants_see_nothing(store: SessionStore) -> None:
    ref = await _fresh(store, tenant="acme")
    await store.append(ref, [message("u1", None, "user", "secret plan")])
    other = SessionRef("globex", ref.id)
    for operation in (
        store.load(other),
        store.append(other, [message("u9", None, "user", "x")]),
        store.search(other, "secret"),
        store.export_bytes(other),
        store.delete(other),
    ):
        with pytest.raises(SessionNotFoundError):
            await operation
    with pytest.raises(SessionNotFoundError):
        async with store.lease(other, owner="r1", ttl=5):
            pass
    assert (await store.list_sessions(tenant="globex")).sessions == []
    assert len((await store.load(ref)).entries) == 1


async def test_lease_is_exclusive_and_free_once_released(store: SessionStore) -> None:
    ref = await _fresh(store)
    async with store.lease(ref, owner="replica-1", ttl=30):
        with pytest.raises(SessionBusyError):
            async with store.lease(ref, owner="replica-2", ttl=30):
                pass
    async with store.lease(ref, owner="replica-2", ttl=30):
        pass


async def test_an_expired_lease_is_taken_over(store: SessionStore) -> None:
    ref = await _fresh(store)
    dead = store.lease(ref, owner="crashed", ttl=0.05)
    await dead.__aenter__()  # never released: its owner died
    await asyncio.sleep(0.3)
    async with store.lease(ref, owner="replica-2", ttl=30):
        pass


async def test_list_sessions_pages_by_id(store: SessionStore) -> None:
    ids = [f"s{i:02d}" for i in range(7)]
    for session_id in ids:
        await store.create(tenant="acme", cwd="/w", session_id=session_id)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await store.list_sessions(tenant="acme", limit=3, cursor=cursor)
        seen += [s.ref.id for s in page.sessions]
        pages += 1
        if page.cursor is None:
            break
        cursor = page.cursor
    assert seen == ids
    assert pages == 3


async def test_delete_and_prune_remove_whole_sessions(store: SessionStore) -> None:
    ref = await _fresh(store)
    await store.append(ref, [message("u1", None, "user", "one")])
    await store.delete(ref)
    with pytest.raises(SessionNotFoundError):
        await store.load(ref)
    kept = await store.create(cwd="/w", session_id="kept")
    assert await store.prune(idle_seconds=3600) == 0
    await asyncio.sleep(0.05)
    assert await store.prune(idle_seconds=0.01) == 1
    with pytest.raises(SessionNotFoundError):
        await store.load(kept)


async def test_append_to_a_torn_tail_finishes_the_line_as_a_file_does(
    store: SessionStore, tmp_path: Path
) -> None:
    source = SESSIONS_BY_NAME["linear_chat.jsonl"].read_bytes()
    torn = source + b'{"type":"message","id":"torn'
    ref = await store.import_bytes(torn)
    stored = await store.load(ref)
    leaf = stored.leaf_id
    await store.append(ref, [message("n1", leaf, "user", "after the tear")])
    # the file store's own rule, applied by the session package to a file on disk
    path = tmp_path / "torn.jsonl"
    path.write_bytes(torn)
    with Session.open(path) as session:
        session.append_message(message("n1", leaf, "user", "x")["message"])
    assert (await store.export_bytes(ref)).startswith(torn + b" \n")
    assert path.read_bytes().startswith(torn + b" \n")


async def test_legacy_sessions_are_kept_but_not_appended_to(store: SessionStore) -> None:
    ref = await store.import_jsonl(SESSIONS_BY_NAME["legacy_v1.jsonl"])
    with pytest.raises(StoreError, match="v1 session"):
        await store.append(ref, [message("z1", None, "user", "x")])
    assert await store.export_bytes(ref) == SESSIONS_BY_NAME["legacy_v1.jsonl"].read_bytes()


def _compacted(session_id: str, words: list[str]) -> bytes:
    """A session file whose messages say ``words`` (one each), then a compaction that keeps
    only the last message: every earlier message is replaced in the model's context."""
    from pi_context import _json
    from pi_context.messages import user_message
    from pi_context.testing import FixedClock, SequentialIds

    session = Session.in_memory(
        "/w", session_id=session_id, ids=SequentialIds(), clock=FixedClock()
    )
    ids = [session.append_message(user_message(w)).id for w in words]
    session.append_compaction("summary of the early work", ids[-1], 100)
    lines = [_json.dumps(session.header), *(e.raw for e in session.entries)]
    return b"\n".join(lines) + b"\n"


async def test_search_tenant_covers_the_tenants_sessions_only(store: SessionStore) -> None:
    one = await store.import_bytes(
        _compacted("t-one", ["the release checklist", "lunch", "checklist again"]),
        tenant="acme",
    )
    two = await store.import_bytes(
        _compacted("t-two", ["release notes", "the checklist of the release"]), tenant="acme"
    )
    other = await store.import_bytes(
        _compacted("t-other", ["release checklist elsewhere", "bye"]), tenant="globex"
    )
    hits = await store.search_tenant("acme", "release checklist", limit=10)
    assert {h.ref for h in hits} == {one, two}
    # each hit is the one the session's own search gives
    for ref in (one, two):
        alone = await store.search(ref, "release checklist", limit=10)
        mine = [h.hit for h in hits if h.ref == ref]
        assert sorted((h.id, h.snippet, h.replaced_by, h.on_branch) for h in mine) == sorted(
            (h.id, h.snippet, h.replaced_by, h.on_branch) for h in alone
        )
    # a fact in compacted-away entries is found, reported as replaced by the compaction
    lunch = await store.search_tenant("acme", "lunch")
    assert [(h.ref, h.hit.snippet) for h in lunch] == [(one, "lunch")]
    assert lunch[0].hit.replaced_by is not None
    assert [h.hit.score for h in hits] == sorted((h.hit.score for h in hits), reverse=True)
    assert len(await store.search_tenant("acme", "release checklist", limit=2)) == 2
    assert await store.search_tenant("acme", "release checklist", limit=0) == []
    assert await store.search_tenant("acme", "   ") == []
    assert await store.search_tenant("nobody", "release") == []
    assert [h.ref for h in await store.search_tenant("globex", "elsewhere")] == [other]
    with pytest.raises(StoreError, match="invalid tenant"):
        await store.search_tenant("../x", "release")
