"""Real summaries on the side (``--summary-url``): what is sent, what is counted."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from benchmarks.economy.real_summary import (
    RealSummarizer,
    carry_over,
    cut_to_fit,
    fact_places,
    kept_rates,
    read_measured,
    real_summary_line,
    system_text,
)
from benchmarks.economy.workload import generate_workload

WORKLOAD = generate_workload(3, prompts=160, retention=True)
PROBES = [p.probe for p in WORKLOAD.prompts if p.probe is not None]


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A fake OpenAI server whose summary repeats the first two planted facts it was sent."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            prompt = body["messages"][1]["content"]
            facts = [p.fact for p in PROBES if p.fact in prompt][:2]
            answer = {"choices": [{"message": {"content": "## Goal\n" + " ".join(facts)}}]}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_only_requests_holding_a_fact_are_sent_and_each_fact_is_counted(
    server: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    url, seen = server
    real = RealSummarizer(url, "tiny", log=tmp_path / "real.jsonl")
    real.observe("system", "<conversation>nothing planted</conversation>", PROBES, 1)
    assert seen == []
    a, b, c = PROBES[0], PROBES[1], PROBES[2]
    prompt = (
        f"<conversation>{a.fact} {b.fact}</conversation>\n"
        f"<previous-summary>{c.fact}</previous-summary>\nSummarize."
    )
    real.observe("the system prompt", prompt, PROBES, 2)
    assert seen[0]["model"] == "tiny"
    assert seen[0]["messages"][0] == {"role": "system", "content": "the system prompt"}
    assert seen[0]["max_tokens"] == 512
    kept = {(r["fact"], r["where"]): r["kept"] for r in real.records}
    # the fake keeps the first two facts in probe order: a and b, not c
    assert kept == {(a.fact, "new"): True, (b.fact, "new"): True, (c.fact, "carry"): False}
    rates = kept_rates(real.records)
    assert rates["carry"] == (0, 1)
    line = real_summary_line({"contender": "pi", "real_summaries": real.records})
    assert line.startswith("pi: 1 summary requests sent, 0 failed; kept / present:")
    assert "carry 0/1" in line
    logged = [json.loads(line) for line in (tmp_path / "real.jsonl").read_text().splitlines()]
    assert logged == real.records


def test_a_server_that_fails_is_recorded_not_raised() -> None:
    real = RealSummarizer("http://127.0.0.1:9/v1", "tiny", timeout=5)
    real.observe("s", f"<conversation>{PROBES[0].fact}</conversation>", PROBES, 7)
    assert real.records[0]["request"] == 7
    assert "error" in real.records[0]
    assert kept_rates(real.records) == {}


def test_a_long_prompt_keeps_its_head_and_tail_and_only_facts_sent_count() -> None:
    text = "A" * 1000 + PROBES[0].fact + "B" * 5000 + "C" * 1000
    cut = cut_to_fit(text, 1200)
    assert len(cut) <= 1200
    assert cut.startswith("A" * 300)
    assert cut.endswith("C" * 700)
    assert PROBES[0].fact not in cut
    assert fact_places(cut, PROBES) == []
    assert cut_to_fit("short", 1200) == "short"


def test_system_text_of_either_api() -> None:
    assert system_text({"system": [{"type": "text", "text": "x"}], "messages": []}) == "x"
    assert system_text({"system": "y"}) == "y"
    assert system_text({"messages": [{"role": "system", "content": "z"}]}) == "z"


def _prompt(*facts: str) -> str:
    return "<conversation>" + " ".join(facts) + "</conversation>\nSummarize."


def test_each_record_says_how_much_of_its_prompt_was_sent(
    server: tuple[str, list[dict[str, Any]]],
) -> None:
    url, _seen = server
    real = RealSummarizer(url, "tiny", window=1024, max_tokens=100)
    whole = _prompt(PROBES[0].fact)
    real.observe("s", whole, PROBES, 1)
    long = PROBES[1].fact + " " + "x" * 9000 + _prompt(PROBES[2].fact)
    real.observe("s", long, PROBES, 2)
    sizes = {r["request"]: (r["sent_chars"], r["prompt_chars"], r["cut"]) for r in real.records}
    assert sizes[1] == (len(whole), len(whole), False)
    sent, total, cut = sizes[2]
    assert (total, cut) == (len(long), True)
    assert sent < total
    line = real_summary_line({"contender": "pi", "real_summaries": real.records})
    assert line.endswith(
        f"; 1 of 2 prompts sent whole, share of a prompt's characters sent "
        f"{sent / total:.0%}-100% (median 100%)"
    )


def test_a_rerun_sends_only_the_requests_not_yet_answered(
    server: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    url, seen = server
    log = tmp_path / "unit.real.jsonl"
    first = RealSummarizer(url, "tiny", log=log)
    first.observe("s", _prompt(PROBES[0].fact), PROBES, 1)
    first.observe("s", _prompt(PROBES[1].fact), PROBES, 2)
    with log.open("a") as out:
        out.write('{"request": 3, "kind": "dec')  # the run was stopped mid-line
    assert len(seen) == 2

    measured = carry_over(log)
    assert not log.exists()
    assert sorted(measured) == sorted((r["request"], r["digest"]) for r in first.records)
    again = RealSummarizer(url, "tiny", log=log, measured=measured)
    again.observe("s", _prompt(PROBES[0].fact), PROBES, 1)  # answered: not sent
    again.observe("s", _prompt(PROBES[3].fact), PROBES, 2)  # another text: sent
    again.observe("s", _prompt(PROBES[1].fact), PROBES, 3)  # another number: sent
    assert len(seen) == 4
    assert again.records[0] == first.records[0]
    assert [r["fact"] for r in again.records] == [PROBES[i].fact for i in (0, 3, 1)]
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert logged == again.records

    # a third run still knows what the first measured (kept in the .previous file)
    previous = tmp_path / "unit.real.previous.jsonl"
    assert read_measured(previous) == measured
    third = carry_over(log)
    assert set(measured) < set(third)
    assert len(third) == 4


def test_failed_and_undigested_records_are_sent_again(tmp_path: Path) -> None:
    log = tmp_path / "old.real.jsonl"
    records = [
        {"request": 1, "error": "URLError: refused"},
        {"request": 2, "kind": "decision", "fact": "F", "where": "new", "kept": False},
        {"request": 3, "kind": "error", "fact": "G", "where": "new", "kept": True, "digest": "d"},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    assert read_measured(log) == {(3, "d"): [records[2]]}
    assert read_measured(tmp_path / "missing.jsonl") == {}
