"""A tool declaration and a system message shared by the local-model tests."""

from __future__ import annotations

from pi_context.messages import SystemMessage, ToolDeclaration

__all__ = ["READ", "SYSTEM"]

READ: ToolDeclaration = {
    "name": "read",
    "description": "Read a file from disk.\nMore details here.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
}

SYSTEM: SystemMessage = {
    "role": "system",
    "content": "",
    "sections": {"preamble": "You are a helpful assistant.", "cwd": "<cwd>\n/tmp/p\n</cwd>"},
    "toolsAdded": [READ],
    "timestamp": 1,
}
