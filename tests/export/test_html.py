"""HTML export, checked as a browser shows it (headless Chromium) and as static text.

The browser tests need Debian's ``chromium`` package at ``/usr/bin/chromium``; they skip with
that reason when it is absent (CI: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pi_context.errors import SessionFormatError
from pi_context.export import SessionDocument, default_html_name, export_file, render_html
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


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in (Path(__file__).parents[1] / "data" / "conformance" / "sessions" / "small").glob(
            "*.jsonl"
        )
    ),
)
def test_every_conformance_session_renders(name: str, tmp_path: Path) -> None:
    source = Path(__file__).parents[1] / "data" / "conformance" / "sessions" / "small" / name
    try:
        doc = SessionDocument.load(source)
    except SessionFormatError:
        return  # not a session (pi rejects these too)
    page = export_file(doc, tmp_path / "out.html")
    dom = Dom()
    dom.feed(page.read_text(encoding="utf-8"))
    rendered = {_attrs(e).get("id") for e in dom.elements}
    for entry in doc.entries:
        assert f"e-{entry['id']}" in rendered
    assert len(dom.select("li", "node")) == len(doc.entries)
    assert len(dom.select("li", "on-path")) == len(doc.active_path)
