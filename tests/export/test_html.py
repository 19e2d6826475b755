"""HTML export, checked as a browser shows it (headless Chromium) and as static text.

The browser tests need Debian's ``chromium`` package at ``/usr/bin/chromium``; they skip with
that reason when it is absent (CI: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import SessionFormatError
from pi_context.export import SessionDocument, default_html_name, export_file, render_html
from pi_context.export.markdown import markdown_to_html
from tests.export import sessions

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs /usr/bin/chromium (Debian package 'chromium')"
)


class Dom(HTMLParser):
    """The rendered DOM as a flat list of (tag, attrs, text-inside, open-ancestor tags)."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[dict[str, object]] = []
        self._stack: list[dict[str, object]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element: dict[str, object] = {
            "tag": tag,
            "attrs": dict(attrs),
            "text": [],
            "ancestors": list(self._stack),
        }
        self.elements.append(element)
        if tag not in ("meta", "img", "br", "input", "link"):
            self._stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            if self._stack.pop()["tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for element in self._stack:
            text = element["text"]
            assert isinstance(text, list)
            text.append(data)

    def by_id(self, element_id: str) -> dict[str, object]:
        for element in self.elements:
            attrs = element["attrs"]
            assert isinstance(attrs, dict)
            if attrs.get("id") == element_id:
                return element
        raise AssertionError(f"no element #{element_id}")

    def text(self, element: dict[str, object]) -> str:
        parts = element["text"]
        assert isinstance(parts, list)
        return "".join(parts)

    def select(self, tag: str, cls: str) -> list[dict[str, object]]:
        out = []
        for element in self.elements:
            attrs = element["attrs"]
            assert isinstance(attrs, dict)
            if element["tag"] == tag and cls in str(attrs.get("class", "")).split():
                out.append(element)
        return out


def shown_dom(page: Path, fragment: str = "") -> Dom:
    """The DOM after Chromium loaded the page and ran its script (network disabled)."""
    result = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--dump-dom",
            page.as_uri() + fragment,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    dom = Dom()
    dom.feed(result.stdout)
    return dom


def _attrs(element: dict[str, object]) -> dict[str, str | None]:
    attrs = element["attrs"]
    assert isinstance(attrs, dict)
    return attrs


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("export")
    doc = SessionDocument.load(sessions.write(base / "s.jsonl"))
    return export_file(doc, base / "s.html")


def test_page_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text)
    assert "@import" not in text
    assert "<link" not in text


def test_default_name_follows_pi() -> None:
    assert default_html_name(Path("/x/2026_abc.jsonl")) == "pi-session-2026_abc.html"


def test_user_text_with_markup_is_escaped() -> None:
    doc = SessionDocument.from_entries(
        sessions.HEADER,
        [
            {
                "type": "message",
                "id": "1",
                "parentId": None,
                "message": {"role": "user", "content": "<script>alert(1)</script>"},
            }
        ],
        "1",
    )
    html = render_html(doc)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)" not in html


@needs_chromium
def test_browser_shows_branch_tree_compaction_and_tokens(page: Path) -> None:
    dom = shown_dom(page)
    body = next(e for e in dom.elements if e["tag"] == "body")
    assert _attrs(body).get("data-ready") == "1", "the page script did not run"

    # header: token counts, cache hit ratio and cost
    overview = dom.text(dom.by_id("overview"))
    assert "input 1,280" in overview
    assert "cache read 4,200" in overview
    assert "Cache hit ratio" in overview
    assert "$0.0120" in overview

    # tree: every entry, the active path marked, the leaf highlighted, the label shown
    nodes = dom.select("li", "node")
    assert len(nodes) == len(sessions.entries())
    on_path = {_attrs(n)["data-id"] for n in dom.select("li", "on-path")}
    assert "b0000001" not in on_path
    assert {"a0000001", "a0000006", "a000000c"} <= on_path
    assert [_attrs(n)["data-id"] for n in dom.select("li", "leaf")] == ["a000000c"]
    assert "start-here" in dom.text(dom.by_id("tree"))

    # the active branch: tool call and its result, thinking, answer text, branch summary
    branch = dom.text(dom.by_id("branch"))
    assert "ls -la" in branch
    assert "line 60 of the listing" in branch
    assert "I should run ls" in branch
    assert "It is a small project." in branch  # Markdown rendered
    strong = [e for e in dom.elements if e["tag"] == "strong"]
    assert any(dom.text(e) == "small" for e in strong)
    assert "dropped it." in dom.text(dom.by_id("e-a0000006"))
    assert "Delete everything" not in branch

    # the compaction boundary, with the entries it replaced collapsed in place
    boundary = dom.text(dom.by_id("e-a0000009"))
    assert "4,321 tokens" in boundary
    assert "List and summarize the project files." in boundary
    assert "README.md" in boundary
    replaced = dom.by_id("replaced-a0000009")
    assert replaced["tag"] == "details"
    assert "open" not in _attrs(replaced)
    inside = [_attrs(e).get("id") for e in dom.elements if replaced in e["ancestors"]]  # type: ignore[operator]
    assert {"e-a0000002", "e-a0000005", "e-a0000006"} <= set(inside)
    assert "e-a0000007" not in inside

    # off-branch entries are in the page but hidden until picked in the tree
    assert "hidden" in _attrs(dom.by_id("off-branch"))

    # the long tool output is collapsed
    long = [d for d in dom.select("details", "long") if "line 60" in dom.text(d)]
    assert long
    assert "open" not in _attrs(long[0])


@needs_chromium
def test_browser_expands_everything_on_request(page: Path) -> None:
    dom = shown_dom(page, "#expand-all")
    assert "open" in _attrs(dom.by_id("replaced-a0000009"))
    assert all("open" in _attrs(d) for d in dom.elements if d["tag"] == "details")


@needs_chromium
def test_browser_reveals_an_off_branch_entry(page: Path) -> None:
    dom = shown_dom(page, "#e-b0000001")
    assert "hidden" not in _attrs(dom.by_id("off-branch"))
    entry = dom.by_id("e-b0000001")
    assert "hidden" not in _attrs(entry)
    assert "Delete everything" in dom.text(entry)


CONFORMANCE_SESSIONS = Path(__file__).parents[1] / "data" / "conformance" / "sessions" / "small"
NOT_SESSIONS = {
    "tiny_bom_header.jsonl",
    "tiny_empty.jsonl",
    "tiny_header_without_id.jsonl",
    "tiny_no_header.jsonl",
    "tiny_whitespace.jsonl",
}
"""Conformance files pi refuses to load as sessions: the export refuses them too."""


@pytest.mark.parametrize("name", sorted(NOT_SESSIONS))
def test_a_file_pi_refuses_is_not_exported(name: str) -> None:
    with pytest.raises(SessionFormatError, match="not a valid pi session"):
        SessionDocument.load(CONFORMANCE_SESSIONS / name)


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in CONFORMANCE_SESSIONS.glob("*.jsonl") if p.name not in NOT_SESSIONS),
)
def test_every_conformance_session_renders(name: str, tmp_path: Path) -> None:
    doc = SessionDocument.load(CONFORMANCE_SESSIONS / name)
    page = export_file(doc, tmp_path / "out.html")
    dom = Dom()
    dom.feed(page.read_text(encoding="utf-8"))
    rendered = {_attrs(e).get("id") for e in dom.elements}
    for entry in doc.entries:
        assert f"e-{entry['id']}" in rendered
    assert len(dom.select("li", "node")) == len(doc.entries)
    assert len(dom.select("li", "on-path")) == len(doc.active_path)


# -- hostile session data ------------------------------------------------------------------

COMMENT_SCRIPT = "<!--<script>"
HOSTILE_IDS = ["h<!--<script", "h</script><script>alert(1)</script>", "h\u2028&amp;"]


def _hostile_doc() -> SessionDocument:
    first, second, third = HOSTILE_IDS
    entries: list[dict[str, Any]] = [
        {
            "type": "message",
            "id": first,
            "parentId": None,
            "message": {"role": "user", "content": f"{COMMENT_SCRIPT} hi", "timestamp": 1},
        },
        {
            "type": "message",
            "id": second,
            "parentId": first,
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "see [**the** docs](https://a.test/x_**y**_*z*) "
                        f"and **bold** {COMMENT_SCRIPT}",
                    }
                ],
                "stopReason": "stop",
                "timestamp": 2,
            },
        },
        {"type": "label", "id": "lab", "parentId": second, "targetId": first, "label": "</script>"},
        {
            "type": "message",
            "id": third,
            "parentId": "lab",
            "message": {"role": "user", "content": "</style><!--", "timestamp": 3},
        },
        {
            "type": "message",
            "id": "off",
            "parentId": first,
            "message": {"role": "user", "content": "the other branch", "timestamp": 4},
        },
    ]
    return SessionDocument.from_entries(sessions.HEADER, entries, third)


def _session_data(page: str) -> str:
    match = re.search(r'<script type="application/json" id="session-data">(.*?)</script>', page)
    assert match is not None
    return match.group(1)


def test_embedded_data_cannot_change_the_html_parser_state() -> None:
    page = render_html(_hostile_doc())
    data = _session_data(page)
    assert not re.search("[<>&\u2028\u2029]", data)
    assert json.loads(data)["path"] == [HOSTILE_IDS[0], HOSTILE_IDS[1], "lab", HOSTILE_IDS[2]]
    # the page's own script is intact and is the last script element
    assert page.count("<script>") == 1
    assert page.rstrip().endswith("})();\n</script></body></html>")


def test_content_security_policy_allows_only_the_pages_own_script_and_style() -> None:
    page = render_html(_hostile_doc())
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert meta is not None
    assert page.index(meta.group(0)) < page.index("<style>")
    policy = dict(part.strip().split(" ", 1) for part in meta.group(1).split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["img-src"] == "data:"
    for tag, directive in (("style", "style-src"), ("script", "script-src")):
        found = re.search(rf"<{tag}>(.*?)</{tag}>", page, re.S)
        assert found is not None
        digest = base64.b64encode(hashlib.sha256(found.group(1).encode()).digest()).decode()
        assert policy[directive] == f"'sha256-{digest}'"
    assert ' style="' not in page  # inline style attributes would be refused


def test_emphasis_is_never_marked_up_inside_a_link_url() -> None:
    html = markdown_to_html("see [**the** docs](https://a.test/x_**y**_*z*) and **b**")
    assert '<a href="https://a.test/x_**y**_*z*"><strong>the</strong> docs</a>' in html
    assert "<strong>b</strong>" in html


@needs_chromium
def test_browser_tree_works_with_hostile_data(tmp_path: Path) -> None:
    page = export_file(_hostile_doc(), tmp_path / "hostile.html")
    dom = shown_dom(page, "#e-off")
    body = next(e for e in dom.elements if e["tag"] == "body")
    assert _attrs(body).get("data-ready") == "1", "the page script did not run"
    # the script revealed the off-branch entry named in the fragment, and indented the tree
    assert "hidden" not in _attrs(dom.by_id("off-branch"))
    assert "hidden" not in _attrs(dom.by_id("e-off"))
    nodes = {_attrs(n)["data-id"]: n for n in dom.select("li", "node")}
    assert set(nodes) == {*HOSTILE_IDS, "lab", "off"}
    assert "padding-left: 14px" in str(_attrs(nodes[HOSTILE_IDS[1]]).get("style"))
    # hostile text is shown as text
    assert COMMENT_SCRIPT in dom.text(dom.by_id(f"e-{HOSTILE_IDS[0]}"))
    assert "</script>" in dom.text(dom.by_id("tree"))
    links = [e for e in dom.elements if e["tag"] == "a" and "a.test" in str(_attrs(e)["href"])]
    assert [_attrs(a)["href"] for a in links] == ["https://a.test/x_**y**_*z*"]


@needs_chromium
def test_browser_reports_no_content_security_policy_violation(tmp_path: Path) -> None:
    """The policy's hashes match the page's own script and style, so nothing is refused (a
    wrong hash is logged as a violation: checked too, so the check itself can fail)."""
    page = export_file(_hostile_doc(), tmp_path / "hostile.html")
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub("sha256-[^']*", "sha256-AAAA", page.read_text("utf-8")), "utf-8")
    logs = []
    for target in (page, broken):
        result = subprocess.run(
            [
                str(CHROMIUM),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--enable-logging=stderr",
                "--v=0",
                "--dump-dom",
                target.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        logs.append(result.stderr)
    assert "Content Security Policy" not in logs[0]
    assert "Content Security Policy" in logs[1]
