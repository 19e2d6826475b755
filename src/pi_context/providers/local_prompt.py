"""What the embedded model reads, and what of its output may reach the user.

The prompt is SmolLM2's ChatML (``<|im_start|>role ... <|im_end|>``), rendered from the same
delivery plan as the remote adapters (system patches in place), so consecutive prompts of a
growing conversation extend each other and llama.cpp reuses the evaluated prefix.

A 135M model knows no tool protocol (its chat template has none), so nothing here shows it
one: the tools are listed in the system prompt in plain words, a call is produced under a
grammar only after the model chose it (:mod:`pi_context.providers.local_decision`), an
earlier call is told in words ("Let me use the read tool on notes.txt."), and a tool result
comes back as a user turn in plain words that names the tool, what it ran on, whether it
failed, and repeats the request it serves. (Shown its own ``<tool_call>`` markup, the model
answered a tool result with another ``<tool_call``.) Markup the model invents anyway
(``<tool_result>``, a new ``<|im_start|>`` turn, ...) ends its answer: :func:`markup_start`
finds it, and neither the stream nor the stored message ever holds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pi_context.messages import AssistantMessage, ToolDeclaration, ToolResultMessage
from pi_context.providers.delivery import Delivery, SystemUpdate, user_blocks

__all__ = [
    "held_back",
    "markup_start",
    "render_chatml",
    "tool_instructions",
    "tool_result_text",
]

# Protocol markup that never belongs in an answer: ChatML turn tokens and the tags of the
# tool conventions small models have seen (Hermes/Qwen style).
_MARKUP = re.compile(
    r"<\|im_(?:start|end)\|>|<\|endoftext\|>|</?(?:tool_call|tool_result|tool_response|tools)\b"
)
_MARKUP_PREFIXES = (
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<tool_call",
    "</tool_call",
    "<tool_result",
    "</tool_result",
    "<tool_response",
    "</tool_response",
    "<tools",
    "</tools",
)
_RESULT_LIMIT = 6000
"""Characters of one tool result shown to the model (head and tail are kept)."""
_REQUEST_LIMIT = 400


def markup_start(text: str) -> int:
    """Where protocol markup begins in ``text``, or ``-1``."""
    found = _MARKUP.search(text)
    return found.start() if found else -1


def held_back(text: str, start: int = 0) -> int:
    """How much of ``text`` may be shown now: up to a ``<`` that may still begin markup."""
    pos = text.find("<", start)
    while pos >= 0:
        tail = text[pos:]
        if len(tail) < 16 and any(p.startswith(tail) for p in _MARKUP_PREFIXES):
            return pos
        pos = text.find("<", pos + 1)
    return len(text)


def tool_instructions(tools: Sequence[ToolDeclaration]) -> str:
    """The tool section appended to the system prompt (stable while the tools are)."""
    lines = ["# Tools", "You can use these tools on the user's computer:"]
    for tool in tools:
        params = tool.get("parameters") or {}
        props = params.get("properties") or {}
        args = ", ".join(str(name) for name in props) or "none"
        summary = (tool["description"].strip().splitlines() or [""])[0]
        lines.append(f"- {tool['name']} ({args}): {summary}")
    lines.append(
        "Use a tool only when the request needs the user's files or computer; "
        "otherwise answer directly."
    )
    return "\n".join(lines)


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def _assistant_text(message: AssistantMessage) -> str:
    """An assistant turn; its calls in plain words (markup here would be copied next turn)."""
    parts: list[str] = []
    for block in message["content"]:
        if block["type"] == "text" and block["text"].strip():
            parts.append(block["text"].strip())
        elif block["type"] == "toolCall":
            target = _target(block.get("arguments") or {})
            parts.append(f"Let me use the {block['name']} tool{target}.")
    return " ".join(parts)


def _target(arguments: Mapping[str, Any]) -> str:
    """What a call ran on, in a few words (`` on notes.txt``, `` `ls -l` ``)."""
    for key in ("path", "file_path", "file"):
        if isinstance(arguments.get(key), str):
            return f" on {arguments[key]}"
    command = arguments.get("command")
    if isinstance(command, str):
        return f" `{command[:120]}`"
    return ""


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters left out ...]\n{text[-half:]}"


def tool_result_text(
    message: ToolResultMessage, arguments: Mapping[str, Any], request: str | None
) -> str:
    """A tool result as a user turn a small model reads as data, not as a format to copy."""
    body = "\n".join(b["text"] for b in message["content"] if b["type"] == "text").strip()
    if any(b["type"] == "image" for b in message["content"]):
        body += "\n(an image was returned; this model cannot see images)"
    body = _clip(body, _RESULT_LIMIT) or "(no output)"
    name = message["toolName"]
    target = _target(arguments)
    if message.get("isError"):
        head = f"The {name} tool{target} failed:"
        tail = "Tell me briefly what went wrong. It did not work."
    else:
        head = f"The {name} tool{target} returned:"
        tail = "Answer with the help of this output."
    if request and len(request) <= _REQUEST_LIMIT:
        tail += f" My request was: {request}"
    return f"{head}\n\n{body}\n\n{tail}"


def render_chatml(delivery: Delivery) -> str:
    """The whole prompt, ending with an open assistant turn."""
    out: list[str] = []
    system = delivery.system or ""
    if delivery.tools:
        system = (system + "\n\n" if system else "") + tool_instructions(delivery.tools)
    if system:
        out.append(_turn("system", system))
    calls: dict[str, Mapping[str, Any]] = {}
    request: str | None = None
    for item in delivery.items:
        if isinstance(item, SystemUpdate):
            out.append(_turn("system", item.text))
        elif item["role"] == "user":
            blocks = user_blocks(item["content"])
            text = "".join(b["text"] for b in blocks if b["type"] == "text")
            if any(b["type"] == "image" for b in blocks):
                text += "\n(an image was attached; this model cannot see images)"
            request = text.strip()
            out.append(_turn("user", text))
        elif item["role"] == "assistant":
            for block in item["content"]:
                if block["type"] == "toolCall":
                    calls[block["id"]] = block.get("arguments") or {}
            out.append(_turn("assistant", _assistant_text(item)))
        elif item["role"] == "toolResult":
            arguments = calls.get(item["toolCallId"], {})
            out.append(_turn("user", tool_result_text(item, arguments, request)))
    out.append("<|im_start|>assistant\n")
    return "".join(out)
