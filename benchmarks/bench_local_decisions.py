"""Does the embedded model decide well between a tool call and a plain answer? (issue 11, item 2)

    .venv/bin/python benchmarks/bench_local_decisions.py [--json out/decisions.json] [--only N ...]

A fixed evaluation of :class:`pi_context.providers.local.LocalModel` with its defaults, on the
request the agent sends: pictx's system prompt for an empty project and the four built-in
tools. Sampling is greedy; still, llama.cpp reuses the evaluated prefix of the previous
prompt, which can change low-order digits, so a reply near a tie may differ between runs.

* 24 first replies: 12 prompts need a tool (read, bash or write, with the file or command the
  prompt implies), 12 must be answered in text (among them the prompts of the issue: a haiku
  about the sea, a novel, an essay that became a file name; two follow an earlier tool
  exchange). Counted: the right decision (call or text), the right tool, well-formed
  arguments (valid for the tool's schema and naming the file or command the prompt implies),
  and protocol markup leaking into text.
* 5 replies after a tool result (a read, a listing, a failed command, a write, an error):
  counted are text answers free of markup and answers grounded in the result (they mention
  what the result says, and a failure is not called a success).

Only public API is used, so the same file measures an older checkout
(``PYTHONPATH=<checkout>/src``), as the BEFORE numbers in benchmarks/README.md were.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_context.messages import (
    Message,
    StopReason,
    SystemMessage,
    ToolDeclaration,
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.model import ModelRequest, RequestOptions, complete
from pi_context.prompt import build_sections, options_from_resources
from pi_context.providers.local import LocalModel
from pi_context.providers.local_discovery import local_available
from pi_context.resources import ResourceLoader
from pi_context.tools.registry import default_tools, tool_declarations

Args = Mapping[str, Any]
MARKUP = re.compile(r"<\|im_(start|end)\|>|</?tool_(call|result|response)\b|</?tools>")


def _path_is(name: str) -> Callable[[Args], bool]:
    return lambda a: str(a.get("path", "")).removeprefix("./") == name


def _command_has(*words: str) -> Callable[[Args], bool]:
    return lambda a: all(w in str(a.get("command", "")) for w in words)


def _writes(name: str, *words: str) -> Callable[[Args], bool]:
    def check(a: Args) -> bool:
        content = str(a.get("content", ""))
        return _path_is(name)(a) and bool(content.strip()) and all(w in content for w in words)

    return check


@dataclass(frozen=True)
class Case:
    """One first reply: ``tools`` empty means it must be text; else one of them with ``args``."""

    prompt: str
    tools: tuple[str, ...] = ()
    args: Callable[[Args], bool] | None = None
    history: bool = False
    """Put an earlier exchange (a read of notes.txt and its answer) before the prompt."""


CASES: tuple[Case, ...] = (
    # -- must answer in text ---------------------------------------------------------------
    Case("Write a haiku about the sea."),
    Case(
        "I read a good novel yesterday about a detective in Paris. Can you recommend a similar one?"
    ),
    Case("Write a short essay about George Orwell's novel 1984."),
    Case("What is the capital of France?"),
    Case("Explain what a Python list comprehension is."),
    Case("Hello! How are you today?"),
    Case("What does HTTP stand for?"),
    Case("Translate 'good morning' into Spanish."),
    Case("Give me three tips for writing clean code."),
    Case("What is the difference between a process and a thread?"),
    Case("Thanks! Now tell me a joke about computers.", history=True),
    Case("Great. What is 12 times 12?", history=True),
    # -- need a tool ---------------------------------------------------------------------------
    Case("Read the file notes.txt", ("read",), _path_is("notes.txt")),
    Case("What is in README.md?", ("read",), _path_is("README.md")),
    Case("Show me the contents of src/app.py", ("read",), _path_is("src/app.py")),
    Case("Open config.json and tell me which port it uses.", ("read",), _path_is("config.json")),
    Case("List the files in this directory.", ("bash",), _command_has("ls")),
    Case("Run the tests with pytest.", ("bash",), _command_has("pytest")),
    Case("Check the git status of this project.", ("bash",), _command_has("git", "status")),
    Case("Delete the file old.log", ("bash",), _command_has("rm", "old.log")),
    Case("Create hello.py that prints hello", ("write",), _writes("hello.py", "print")),
    Case("Make a new file todo.md with three chores in it.", ("write",), _writes("todo.md")),
    Case(
        "How many lines does main.py have?",
        ("read", "bash"),
        lambda a: _path_is("main.py")(a) or _command_has("main.py")(a),
    ),
    Case("Now read setup.cfg please.", ("read",), _path_is("setup.cfg"), history=True),
)


@dataclass(frozen=True)
class FollowUp:
    """A reply after a tool result: text that mentions one of ``grounded`` and none of ``wrong``."""

    prompt: str
    call: tuple[str, dict[str, Any]]
    result: str
    is_error: bool = False
    grounded: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()


FOLLOWUPS: tuple[FollowUp, ...] = (
    FollowUp(
        "Read notes.txt and tell me the secret word.",
        ("read", {"path": "notes.txt"}),
        "The secret word is banana.\n",
        grounded=("banana",),
    ),
    FollowUp(
        "List the files in this directory.",
        ("bash", {"command": "ls"}),
        "app.py\nnotes.txt\nREADME.md\n",
        grounded=("app.py", "notes.txt", "README.md"),
    ),
    FollowUp(
        "Run the command frobnicate.",
        ("bash", {"command": "frobnicate"}),
        "bash: line 1: frobnicate: command not found\n\nCommand exited with code 127",
        is_error=True,
        grounded=("not found", "127", "not installed", "does not exist", "doesn't exist"),
        wrong=("exited with code 0", "successfully"),
    ),
    FollowUp(
        "Create hello.py that prints hello",
        ("write", {"path": "hello.py", "content": 'print("hello")\n'}),
        "Successfully wrote 15 bytes to hello.py",
        grounded=("hello.py",),
    ),
    FollowUp(
        "What is in config.json?",
        ("read", {"path": "config.json"}),
        "ENOENT: no such file or directory, access '/tmp/p/config.json'",
        is_error=True,
        grounded=("no such file", "not exist", "doesn't exist", "not found", "missing"),
    ),
)


def agent_system(project: Path) -> tuple[SystemMessage, list[ToolDeclaration]]:
    """The agent's system message for an empty, untrusted project with the built-in tools."""
    resources = ResourceLoader(str(project), trusted=False).load()
    tools = {t.name: t for t in default_tools(project)}
    options = options_from_resources(
        resources,
        selected_tools=list(tools),
        tool_snippets={n: t.prompt_snippet for n, t in tools.items() if t.prompt_snippet},
        tool_guidelines={n: list(t.prompt_guidelines) for n, t in tools.items()},
    )
    declarations = tool_declarations(tools.values())
    system: SystemMessage = {
        "role": "system",
        "content": "",
        "sections": dict(build_sections(options)),
        "toolsAdded": declarations,
        "timestamp": 1,
    }
    return system, declarations


def _assistant(content: Sequence[Any], stop: StopReason = "stop") -> Any:
    return assistant_message(
        list(content), api="local", provider="local", model="m", stop_reason=stop, timestamp=3
    )


def _history() -> list[Message]:
    return [
        user_message("Read notes.txt", timestamp=2),
        _assistant([tool_call("h1", "read", {"path": "notes.txt"})], "toolUse"),
        tool_result_message("h1", "read", [text_block("buy milk\n")], timestamp=4),
        _assistant([text_block("notes.txt says: buy milk.")]),
    ]


@dataclass
class Score:
    right_decision: int = 0
    right_tool: int = 0
    good_args: int = 0
    markup: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)


async def _reply(model: LocalModel, messages: list[Message], tools: list[ToolDeclaration]) -> Any:
    request = ModelRequest(messages=messages, tools=tools, options=RequestOptions(max_tokens=96))
    done = await complete(model, request)
    if done.error is not None:
        raise SystemExit(f"bench_local_decisions: the model failed: {done.error}")
    return done.message


def _text(message: Any) -> str:
    return "".join(b["text"] for b in message["content"] if b["type"] == "text")


async def first_replies(
    model: LocalModel, system: SystemMessage, tools: list[ToolDeclaration], only: set[int]
) -> Score:
    score = Score()
    for n, case in enumerate(CASES, start=1):
        if only and n not in only:
            continue
        messages: list[Message] = [system, *(_history() if case.history else [])]
        messages.append(user_message(case.prompt, timestamp=10))
        start = time.perf_counter()
        reply = await _reply(model, messages, tools)
        seconds = time.perf_counter() - start
        calls = [b for b in reply["content"] if b["type"] == "toolCall"]
        text = _text(reply)
        decided = bool(calls) == bool(case.tools)
        tool_ok = bool(calls) and calls[0]["name"] in case.tools
        args_ok = (
            tool_ok
            and "argumentsError" not in calls[0]
            and (case.args is None or case.args(calls[0].get("arguments") or {}))
        )
        leaked = bool(MARKUP.search(text))
        score.right_decision += decided
        score.right_tool += tool_ok
        score.good_args += args_ok
        score.markup += leaked
        score.rows.append(
            {
                "n": n,
                "prompt": case.prompt,
                "expected": list(case.tools) or "text",
                "calls": [{"name": c["name"], "arguments": c.get("arguments")} for c in calls],
                "text": text[:160],
                "decision": decided,
                "args": args_ok,
                "markup": leaked,
                "seconds": round(seconds, 2),
            }
        )
        mark = "ok " if decided and (not case.tools or args_ok) else "BAD"
        got = (
            f"{calls[0]['name']} {json.dumps(calls[0].get('arguments'))}"
            if calls
            else repr(text[:60])
        )
        print(f"{mark} {n:2d} {case.prompt[:48]:<48} -> {got[:90]}", file=sys.stderr)
    return score


async def follow_ups(
    model: LocalModel, system: SystemMessage, tools: list[ToolDeclaration], only: set[int]
) -> Score:
    score = Score()
    for n, case in enumerate(FOLLOWUPS, start=1):
        if only and -n not in only:
            continue
        name, arguments = case.call
        messages: list[Message] = [
            system,
            user_message(case.prompt, timestamp=2),
            _assistant([tool_call("f1", name, arguments)], "toolUse"),
            tool_result_message(
                "f1", name, [text_block(case.result)], is_error=case.is_error, timestamp=4
            ),
        ]
        reply = await _reply(model, messages, tools)
        text = _text(reply)
        lower = text.lower()
        calls = [b for b in reply["content"] if b["type"] == "toolCall"]
        clean = not MARKUP.search(text) and not calls and bool(text.strip())
        grounded = any(w.lower() in lower for w in case.grounded) and not any(
            w.lower() in lower for w in case.wrong
        )
        score.right_decision += clean
        score.good_args += grounded
        score.markup += bool(MARKUP.search(text))
        score.rows.append(
            {
                "n": n,
                "prompt": case.prompt,
                "text": text[:200],
                "clean": clean,
                "grounded": grounded,
            }
        )
        print(
            f"{'ok ' if clean and grounded else 'BAD'} f{n} {case.prompt[:40]:<40} -> {text[:90]!r}",
            file=sys.stderr,
        )
    return score


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"


async def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, default=None, help="write every reply here")
    parser.add_argument(
        "--only", type=int, nargs="*", default=[], help="case numbers (-N: follow-up N)"
    )
    parser.add_argument(
        "--no-decide",
        action="store_true",
        help="LocalModel(decide=False): one grammar admits a call or text (the model's first "
        "token chooses) instead of the decision step",
    )
    args = parser.parse_args(argv)
    ok, reason = local_available()
    if not ok:
        print(f"bench_local_decisions: {reason}", file=sys.stderr)
        return 2
    only = set(args.only)
    model = LocalModel(decide=False) if args.no_decide else LocalModel()
    with tempfile.TemporaryDirectory() as tmp:
        system, tools = agent_system(Path(tmp))
        start = time.perf_counter()
        first = await first_replies(model, system, tools, only)
        after = await follow_ups(model, system, tools, only)
        seconds = time.perf_counter() - start
    needs = [r for r in first.rows if r["expected"] != "text"]
    plain = [r for r in first.rows if r["expected"] == "text"]
    print("| measure | result |\n|---|---|")
    print(f"| right decision, all first replies | {_pct(first.right_decision, len(first.rows))} |")
    print(
        f"| ... prompts that need a tool: a call | {_pct(sum(r['decision'] for r in needs), len(needs))} |"
    )
    print(
        f"| ... prompts that must not: text | {_pct(sum(r['decision'] for r in plain), len(plain))} |"
    )
    print(f"| right tool (of prompts that need one) | {_pct(first.right_tool, len(needs))} |")
    print(f"| right tool with well-formed arguments | {_pct(first.good_args, len(needs))} |")
    print(f"| first replies with protocol markup in text | {_pct(first.markup, len(first.rows))} |")
    print(
        f"| after a tool result: text without markup | {_pct(after.right_decision, len(after.rows))} |"
    )
    print(
        f"| after a tool result: grounded in the result | {_pct(after.good_args, len(after.rows))} |"
    )
    print(f"| time for all {len(first.rows) + len(after.rows)} replies | {seconds:.0f} s |")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"first": first.rows, "after_tool_result": after.rows, "seconds": seconds}
        args.json.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
