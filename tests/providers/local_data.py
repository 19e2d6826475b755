"""Tool declarations and a system message shared by the local-model tests."""

from __future__ import annotations

from pi_context.messages import SystemMessage, ToolDeclaration

__all__ = ["BASH", "READ", "SYSTEM", "WRITE"]

READ: ToolDeclaration = {
    "name": "read",
    "description": "Read a file from disk.\nMore details here.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
}

BASH: ToolDeclaration = {
    "name": "bash",
    "description": "Run a shell command.",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    },
}

WRITE: ToolDeclaration = {
    "name": "write",
    "description": "Write a file.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
}

SYSTEM: SystemMessage = {
    "role": "system",
    "content": "",
    "sections": {"preamble": "You are a helpful assistant.", "cwd": "<cwd>\n/tmp/p\n</cwd>"},
    "toolsAdded": [READ],
    "timestamp": 1,
}
