"""MCP tool names: sanitizing, the 64-character limit, the hash suffix, stability."""

from __future__ import annotations

from pi_context.mcp.naming import assign_tool_names, tool_identifier


def test_plain_names_are_sanitized() -> None:
    assert assign_tool_names("dev-radius", ["get.item", "list"], {}) == {
        "get.item": "mcp__dev_radius__get_item",
        "list": "mcp__dev_radius__list",
    }


def test_long_names_get_the_hash_suffix() -> None:
    tool = "a" * 70
    name = assign_tool_names("demo", [tool], {})[tool]
    assert name == "mcp__demo__" + "a" * 44 + "_c6540a91"
    assert len(name) == 64


def test_collisions_suffix_every_colliding_tool_and_names_stay_stable() -> None:
    names = assign_tool_names("s", ["a.b", "a-b", "c"], {})
    assert names["c"] == "mcp__s__c"
    assert names["a.b"] != names["a-b"]
    assert all(names[t].startswith("mcp__s__a_b_") for t in ("a.b", "a-b"))
    owners = {n: ("s", t) for t, n in names.items()}
    assert assign_tool_names("s", ["c", "a-b", "a.b"], owners) == names


def test_a_name_owned_by_another_server_is_not_taken() -> None:
    owners = {"mcp__a_b__x": ("a-b", "x")}
    name = assign_tool_names("a_b", ["x"], owners)["x"]
    assert name.startswith("mcp__a_b__x_")
    assert len(name) == len("mcp__a_b__x_") + 8


def test_identifier() -> None:
    assert tool_identifier("mcp__dev-radius__x") == "mcp__dev_radius__x"
