"""tool_search's ranking and the mcp_servers section."""

from __future__ import annotations

from pi_context.mcp.search import SearchDocument, rank_tools, tokenize
from pi_context.mcp.section import ServerLine, render_servers_section


def test_tokenizer() -> None:
    assert tokenize("listIssues for the Repositories") == ["list", "issue", "repository"]
    assert tokenize("boxes classes bus") == ["box", "class", "bus"]


def doc(name: str, description: str, **props: str) -> SearchDocument:
    schema = {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
    }
    return SearchDocument(name, description, schema, "mcp__gh GitHub")


def test_ranking_prefers_exact_names_then_matched_terms() -> None:
    docs = [
        doc("mcp__gh__create_issue", "Create an issue", title="Issue title"),
        doc("mcp__gh__list_issues", "List issues of a repository", state="open or closed"),
        doc("mcp__w__weather", "Weather for a city", city="City name"),
    ]
    assert [d.name for d in rank_tools("list issues", docs, 8)][:2] == [
        "mcp__gh__list_issues",
        "mcp__gh__create_issue",
    ]
    assert rank_tools("weather", docs, 8)[0].name == "mcp__w__weather"
    assert [d.name for d in rank_tools("create_issue", docs, 1)] == ["mcp__gh__create_issue"]
    assert rank_tools("zebra", docs, 8) == []


def test_section_lists_sorted_servers_with_summaries() -> None:
    lines = [
        ServerLine("mcp__b", "tool_search", "Bee server\nsecond line ignored"),
        ServerLine("mcp__a_b", "tool_search", None),
        ServerLine("mcp__A", "tool_search", "x" * 300),
    ]
    text = render_servers_section(lines, ["b", "a_b", "A"])
    assert text is not None
    out = text.splitlines()
    assert out[0].startswith("The tools of these MCP servers are not declared to you.")
    assert out[1] == "- mcp__A (tool_search): " + "x" * 249 + "…"
    assert out[2] == "- mcp__a_b (tool_search)"
    assert out[3] == "- mcp__b (tool_search): Bee server"
    assert len(out) == 4
    assert render_servers_section([], []) is None


def test_section_budget_drops_servers_from_the_end() -> None:
    lines = [
        ServerLine(f"mcp__server_{i:03d}_" + "n" * 40, "tool_search", "summary") for i in range(200)
    ]
    text = render_servers_section(lines, [f"s{i:03d}" for i in range(200)])
    assert text is not None
    assert len(text) <= 4096
    assert text.splitlines()[-1].startswith("- … ")
    assert text.splitlines()[-1].endswith("more servers; find their tools with tool_search")
