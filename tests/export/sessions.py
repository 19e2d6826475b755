"""A small hand-built session with every kind of entry the exports show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0194f3a2-7c1e-7b6a-9d2e-5f8a1b2c3d4e",
    "timestamp": "2026-01-05T10:00:00.000Z",
    "cwd": "/home/u/proj",
}

LONG_OUTPUT = "\n".join(f"line {n} of the listing" for n in range(1, 61))


def _usage(inp: int, out: int, read: int = 0, write: int = 0, cost: float = 0.0) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": inp + out + read + write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def _msg(eid: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": "2026-01-05T10:00:01.000Z",
        "message": message,
    }


def _assistant(
    content: list[dict[str, Any]], usage: dict[str, Any], stop: str = "stop"
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-x",
        "usage": usage,
        "stopReason": stop,
        "timestamp": 1767607205100,
    }


def entries() -> list[dict[str, Any]]:
    """Main line a1..a9 with a compaction, an abandoned branch b1..b2 and a branch summary."""

    def text(t: str) -> list[dict[str, Any]]:
        return [{"type": "text", "text": t}]

    return [
        _msg(
            "a0000001",
            None,
            {
                "role": "system",
                "content": "",
                "sections": {
                    "preamble": "You are a test agent.",
                    "cwd": "<cwd>\n/home/u/proj\n</cwd>",
                },
                "toolsAdded": [{"name": "bash", "description": "run", "parameters": {}}],
                "timestamp": 1,
            },
        ),
        _msg(
            "a0000002",
            "a0000001",
            {"role": "user", "content": text("Please list the files"), "timestamp": 2},
        ),
        _msg(
            "a0000003",
            "a0000002",
            _assistant(
                [
                    {"type": "thinking", "thinking": "I should run ls"},
                    {
                        "type": "toolCall",
                        "id": "call_1",
                        "name": "bash",
                        "arguments": {"command": "ls -la"},
                    },
                ],
                _usage(1000, 20, 0, 1000, 0.01),
                "toolUse",
            ),
        ),
        _msg(
            "a0000004",
            "a0000003",
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "bash",
                "content": text(LONG_OUTPUT),
                "isError": False,
                "timestamp": 4,
            },
        ),
        _msg(
            "a0000005",
            "a0000004",
            _assistant(text("There are sixty files."), _usage(50, 10, 1000, 0, 0.002)),
        ),
        # abandoned branch from a0000005
        _msg(
            "b0000001",
            "a0000005",
            {"role": "user", "content": text("Delete everything (abandoned idea)"), "timestamp": 6},
        ),
        _msg(
            "b0000002",
            "b0000001",
            _assistant(text("Deleting would be unwise."), _usage(60, 10, 1000)),
        ),
        {
            "type": "branch_summary",
            "id": "a0000006",
            "parentId": "a0000005",
            "timestamp": "2026-01-05T10:00:07.000Z",
            "fromId": "b0000002",
            "summary": "The user considered deleting everything and dropped it.",
            "details": {"readFiles": [], "modifiedFiles": []},
            "fromHook": False,
        },
        _msg(
            "a0000007",
            "a0000006",
            {"role": "user", "content": text("Now summarize the project"), "timestamp": 8},
        ),
        _msg(
            "a0000008",
            "a0000007",
            _assistant(text("It is a **small** project."), _usage(80, 12, 1000)),
        ),
        {
            "type": "compaction",
            "id": "a0000009",
            "parentId": "a0000008",
            "timestamp": "2026-01-05T10:00:09.000Z",
            "summary": "## Goal\nList and summarize the project files.",
            "firstKeptEntryId": "a0000007",
            "tokensBefore": 4321,
            "details": {"readFiles": ["README.md"], "modifiedFiles": ["a.py"]},
            "fromHook": False,
        },
        {
            "type": "label",
            "id": "a000000a",
            "parentId": "a0000009",
            "timestamp": "2026-01-05T10:00:10.000Z",
            "targetId": "a0000002",
            "label": "start-here",
        },
        _msg(
            "a000000b",
            "a000000a",
            {"role": "user", "content": text("Thanks, that's all"), "timestamp": 11},
        ),
        _msg("a000000c", "a000000b", _assistant(text("You're welcome."), _usage(90, 5, 1200))),
    ]


def write(path: Path) -> Path:
    lines = [HEADER, *entries()]
    path.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    return path
