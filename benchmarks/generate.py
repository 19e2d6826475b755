"""Seeded generator of pi-format (v3) session files for the benchmarks.

Three profiles (``--profile``):

* ``small``   about 2k entries: a coding session with a few branches and one compaction.
* ``branchy`` about 50k entries with many branches: the leaf often moves back to an earlier
  user prompt (sometimes leaving a branch summary) and the conversation continues from there.
* ``large``   about 100k entries, about 170 MB: tool-heavy, with sizeable tool outputs and a
  compaction (with its system-message snapshot) every couple of thousand entries.

Every profile mixes what real sessions hold: a system message, user prompts, assistant
messages with thinking, text and tool-call blocks and a usage record, tool results (some of
them errors), ``bashExecution`` messages, model and thinking-level changes, labels, context
edits (omissions and replacements), custom entries, custom messages and a session name. Lines
are compact JSON with keys in pi's order, so they look like what pi writes.

The same seed always gives the same bytes. Files go to ``benchmarks/out/`` (git-ignored), with
a ``<name>.meta.json`` beside each describing it.

    .venv/bin/python benchmarks/generate.py                 # all three profiles
    .venv/bin/python benchmarks/generate.py --profile large --seed 7
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

OUT_DIR = Path(__file__).resolve().parent / "out"


@dataclass(frozen=True)
class Profile:
    """Shape of one generated session."""

    name: str
    entries: int
    tool_output_chars: tuple[int, int]  # min/max characters of one tool output
    compaction_every: int  # entries between compactions (0: never)
    branch_every: int  # entries between moves of the leaf back to an earlier prompt (0: never)
    max_tools_per_turn: int


PROFILES: dict[str, Profile] = {
    "small": Profile("session-2k", 2_000, (200, 3_000), 1_500, 400, 6),
    "branchy": Profile("session-50k-branchy", 50_000, (100, 1_500), 4_000, 60, 5),
    "large": Profile("session-100k", 100_000, (280, 4_400), 2_500, 0, 8),
}

_WORD_TEXT = (
    "the a to of and in for is on that with this it be as parser config module function test "
    "value error file line token cache session entry branch context summary build path index "
    "return import class def self async await request response model tool result output input "
    "fix bug refactor rename check update handle case when then else none true false list dict "
    "string bytes buffer offset length count limit retry timeout lock write read edit bash grep"
)
_WORDS = tuple(_WORD_TEXT.split())
_NON_ASCII = ("café", "naïve", "→", "✓", "日本語", "Ärger", "😀", "ß", "—")
_FILES = [
    f"src/{pkg}/{mod}.{ext}"
    for pkg in ("core", "api", "util", "cli", "store")
    for mod in ("parser", "index", "cache", "writer", "config", "errors", "session", "tree")
    for ext in ("py", "ts")
]
_TOOLS = ("read", "bash", "edit", "write", "grep")
_MODELS = (
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
    ("openai", "gpt-5", "openai-responses"),
    ("anthropic", "claude-opus-4-1", "anthropic-messages"),
)
_LEVELS = ("off", "low", "medium", "high")


def _iso(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class _Text:
    """Fast seeded text: slices of a pre-generated corpus of prose and code-like lines."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        prose: list[str] = []
        for _ in range(60_000):
            word = rng.choice(_WORDS)
            if rng.random() < 0.004:
                word = rng.choice(_NON_ASCII)
            prose.append(word)
            if rng.random() < 0.07:
                prose.append(".\n" if rng.random() < 0.3 else ". ")
        self.prose = " ".join(prose)
        code: list[str] = []
        for n in range(12_000):
            indent = "    " * rng.randint(0, 3)
            a, b = rng.choice(_WORDS), rng.choice(_WORDS)
            kind = rng.randint(0, 5)
            if kind == 0:
                code.append(f'{indent}def {a}_{b}(self, value: str = "{a}") -> int:')
            elif kind == 1:
                code.append(f"{indent}return self.{a}[{n % 97}] + {b!r}")
            elif kind == 2:
                code.append(f'{indent}raise ValueError(f"bad {a}: {{value!r}} \\\\ {b}")')
            elif kind == 3:
                code.append(f"{indent}# {a} {b} — see {rng.choice(_FILES)}:{n % 400}")
            elif kind == 4:
                code.append(f"{indent}{a} = {{'{b}': [{n}, {n * 3 % 11}], \"{a}\": None}}")
            else:
                code.append(f"{indent}if {a} is not None and {b}:\t# {n}")
        self.code = "\n".join(code)

    def _slice(self, corpus: str, length: int) -> str:
        length = min(length, len(corpus) - 1)
        start = self.rng.randrange(0, len(corpus) - length)
        return corpus[start : start + length]

    def prose_of(self, lo: int, hi: int) -> str:
        return self._slice(self.prose, self.rng.randint(lo, hi)).strip() or "ok"

    def code_of(self, lo: int, hi: int) -> str:
        return self._slice(self.code, self.rng.randint(lo, hi))


class Generator:
    """Builds one session line by line, tracking the current path for realistic references."""

    def __init__(self, profile: Profile, seed: int) -> None:
        self.profile = profile
        self.rng = random.Random(seed)
        self.text = _Text(self.rng)
        self.now = 1_767_607_200_000  # 2026-01-05T10:00:00Z
        self.ids: set[str] = set()
        self.lines: list[bytes] = []
        self.path: list[tuple[str, str]] = []  # (id, kind) root→leaf of the current leaf
        self.count = 0
        self.since_compaction = 0
        self.since_branch = 0
        self.compactions = 0
        self.branches = 0
        self.model = _MODELS[0]
        self.input_tokens = 4_000
        self.call_no = 0
        self.system: dict[str, Any] = {}

    # -- low level -----------------------------------------------------------------------------

    def _id(self) -> str:
        while True:
            value = f"{self.rng.getrandbits(32):08x}"
            if value not in self.ids:
                self.ids.add(value)
                return value

    def _tick(self, lo: int = 40, hi: int = 4_000) -> int:
        self.now += self.rng.randint(lo, hi)
        return self.now

    def _emit(self, kind: str, fields: dict[str, Any], *, tag: str | None = None) -> str:
        entry_id = self._id()
        parent = self.path[-1][0] if self.path else None
        data: dict[str, Any] = {"type": kind}
        if kind in ("custom", "custom_message"):
            data.update(fields)  # pi writes these fields before "id"
        data.update({"id": entry_id, "parentId": parent, "timestamp": _iso(self._tick())})
        if kind not in ("custom", "custom_message"):
            data.update(fields)
        self.lines.append(orjson.dumps(data))
        self.path.append((entry_id, tag or kind))
        self.count += 1
        self.since_compaction += 1
        self.since_branch += 1
        return entry_id

    def _message(self, message: dict[str, Any]) -> str:
        return self._emit("message", {"message": message}, tag=str(message["role"]))

    # -- content ----------------------------------------------------------------------------------

    def _usage(self, output: int) -> dict[str, Any]:
        self.input_tokens = min(180_000, self.input_tokens + self.rng.randint(200, 2_500))
        cache_read = self.input_tokens * 3 // 4
        fresh = self.input_tokens - cache_read
        cost_in, cost_out, cost_cache = fresh * 3e-6, output * 15e-6, cache_read * 3e-7
        return {
            "input": fresh,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": 0,
            "totalTokens": self.input_tokens + output,
            "cost": {
                "input": round(cost_in, 6),
                "output": round(cost_out, 6),
                "cacheRead": round(cost_cache, 6),
                "cacheWrite": 0,
                "total": round(cost_in + cost_out + cost_cache, 6),
            },
        }

    def _system_message(self) -> dict[str, Any]:
        tools = [
            {
                "name": name,
                "description": self.text.prose_of(80, 400),
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "command": {"type": "string"}},
                    "required": ["path"],
                },
            }
            for name in _TOOLS
        ]
        return {
            "role": "system",
            "content": "",
            "sections": {
                "preamble": self.text.prose_of(300, 600),
                "guidelines": self.text.prose_of(800, 1_600),
                "context": "<project-context>\n"
                + self.text.prose_of(400, 1_200)
                + "\n</project-context>",
                "cwd": "<cwd>\n/home/dev/project\n</cwd>",
            },
            "toolsAdded": tools,
            "timestamp": self.now,
        }

    def _tool_call(self) -> dict[str, Any]:
        self.call_no += 1
        name = self.rng.choice(_TOOLS)
        path = self.rng.choice(_FILES)
        args: dict[str, Any]
        if name == "bash":
            args = {"command": f"cd /home/dev/project && pytest -x -q tests/{path} | tail -n 40"}
        elif name == "edit":
            args = {
                "path": path,
                "oldText": self.text.code_of(40, 300),
                "newText": self.text.code_of(40, 300),
            }
        elif name == "write":
            args = {"path": path, "content": self.text.code_of(200, 1_500)}
        elif name == "grep":
            args = {"pattern": self.rng.choice(_WORDS), "path": "src"}
        else:
            args = {"path": path}
        return {
            "type": "toolCall",
            "id": f"toolu_{self.call_no:08d}",
            "name": name,
            "arguments": args,
        }

    def _assistant(self, blocks: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        provider, model, api = self.model
        output = sum(len(str(b)) for b in blocks) // 4 + 10
        return {
            "role": "assistant",
            "content": blocks,
            "api": api,
            "provider": provider,
            "model": model,
            "usage": self._usage(output),
            "stopReason": stop,
            "timestamp": self._tick(),
        }

    # -- conversation -------------------------------------------------------------------------------

    def turn(self) -> None:
        """One user prompt, tool-using steps, a final answer."""
        self._message(
            {
                "role": "user",
                "content": [{"type": "text", "text": self.text.prose_of(40, 600)}],
                "timestamp": self._tick(),
            }
        )
        lo, hi = self.profile.tool_output_chars
        for _ in range(self.rng.randint(1, self.profile.max_tools_per_turn)):
            calls = [self._tool_call() for _ in range(1 if self.rng.random() < 0.85 else 2)]
            blocks: list[dict[str, Any]] = []
            if self.rng.random() < 0.7:
                blocks.append({"type": "thinking", "thinking": self.text.prose_of(60, 700)})
            if self.rng.random() < 0.5:
                blocks.append({"type": "text", "text": self.text.prose_of(20, 240)})
            blocks.extend(calls)
            self._message(self._assistant(blocks, "toolUse"))
            for call in calls:
                error = self.rng.random() < 0.05
                output = self.text.prose_of(30, 200) if error else self.text.code_of(lo, hi)
                self._message(
                    {
                        "role": "toolResult",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "content": [{"type": "text", "text": output}],
                        "isError": error,
                        "timestamp": self._tick(),
                    }
                )
        final = [{"type": "text", "text": self.text.prose_of(80, 900)}]
        if self.rng.random() < 0.4:
            final.insert(0, {"type": "thinking", "thinking": self.text.prose_of(60, 400)})
        self._message(self._assistant(final, "stop"))

    def extras(self) -> None:
        """Occasional non-conversation entries."""
        r = self.rng.random()
        if r < 0.03:
            self.model = self.rng.choice(_MODELS)
            self._emit("model_change", {"provider": self.model[0], "modelId": self.model[1]})
        elif r < 0.06:
            self._emit("thinking_level_change", {"thinkingLevel": self.rng.choice(_LEVELS)})
        elif r < 0.10:
            target = self.rng.choice(self.path)[0]
            self._emit("label", {"targetId": target, "label": f"checkpoint-{self.count}"})
        elif r < 0.16:
            self._context_edit()
        elif r < 0.18:
            self._emit(
                "custom", {"customType": "todo-state", "data": {"open": self.rng.randint(0, 9)}}
            )
        elif r < 0.20:
            self._emit(
                "custom_message",
                {
                    "customType": "reminder",
                    "content": self.text.prose_of(40, 200),
                    "display": True,
                    "details": {"source": "extension"},
                },
            )
        elif r < 0.24:
            output = self.text.code_of(100, 1_500)
            self._message(
                {
                    "role": "bashExecution",
                    "command": "git status --short",
                    "output": output,
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": self._tick(),
                }
            )
        elif r < 0.245:
            self.system = self._system_message()
            self._message(self.system)

    def _recent(self, kinds: tuple[str, ...]) -> list[str]:
        """Ids of path entries of these kinds since the last compaction (newest last)."""
        found: list[str] = []
        for entry_id, kind in reversed(self.path):
            if kind == "compaction":
                break
            if kind in kinds:
                found.append(entry_id)
        found.reverse()
        return found

    def _context_edit(self) -> None:
        results = self._recent(("toolResult",))[-40:]
        if not results:
            return
        target = self.rng.choice(results)
        replacement: Any = None
        if self.rng.random() < 0.7:
            replacement = {"content": [{"type": "text", "text": "[tool output elided]"}]}
        self._emit("context_edit", {"targetId": target, "replacement": replacement})

    def compaction(self) -> None:
        prompts = self._recent(("user",))
        if len(prompts) < 3:
            return
        first_kept = prompts[-self.rng.randint(1, 2)]
        summary = "## Goal\n" + self.text.prose_of(300, 900) + "\n\n## Progress\n### Done\n"
        summary += (
            self.text.prose_of(400, 1_500) + "\n\n## Next Steps\n" + self.text.prose_of(100, 400)
        )
        read = sorted(self.rng.sample(_FILES, 6))
        modified = sorted(self.rng.sample(_FILES, 3))
        summary += "\n\n<read-files>\n" + "\n".join(read) + "\n</read-files>"
        summary += "\n\n<modified-files>\n" + "\n".join(modified) + "\n</modified-files>"
        snapshot = dict(self.system) if self.system else self._system_message()
        snapshot["timestamp"] = self.now
        self._emit(
            "compaction",
            {
                "summary": summary,
                "firstKeptEntryId": first_kept,
                "tokensBefore": self.input_tokens,
                "details": {"readFiles": read, "modifiedFiles": modified},
                "usage": self._usage(self.rng.randint(800, 2_500)),
                "fromHook": False,
                "systemMessage": snapshot,
            },
        )
        self.compactions += 1
        self.since_compaction = 0
        self.input_tokens = 12_000

    def branch(self) -> None:
        """Move the leaf back to an earlier prompt's parent (continue from there)."""
        prompts = [i for i, (_, kind) in enumerate(self.path) if kind == "user"][-6:]
        if len(prompts) < 2:
            return
        index = self.rng.choice(prompts[:-1])
        old_leaf = self.path[-1][0]
        del self.path[index:]
        self.branches += 1
        self.since_branch = 0
        if self.path and self.rng.random() < 0.4:
            self._emit(
                "branch_summary",
                {
                    "fromId": old_leaf,
                    "summary": "## Goal\n" + self.text.prose_of(200, 800),
                    "details": {"readFiles": [self.rng.choice(_FILES)], "modifiedFiles": []},
                    "fromHook": False,
                },
            )

    def run(self) -> None:
        p = self.profile
        provider, model, _ = self.model
        self._emit("model_change", {"provider": provider, "modelId": model})
        self._emit("thinking_level_change", {"thinkingLevel": "medium"})
        self.system = self._system_message()
        self._message(self.system)
        self._emit("session_info", {"name": f"benchmark {p.name}"})
        while self.count < p.entries:
            self.turn()
            if self.rng.random() < 0.5:
                self.extras()
            if p.compaction_every and self.since_compaction >= p.compaction_every:
                self.compaction()
            if p.branch_every and self.since_branch >= p.branch_every:
                self.branch()

    def header(self, seed: int) -> bytes:
        session_id = f"0194f3a2-{seed:04x}-7000-8000-{self.profile.entries:012d}"
        return orjson.dumps(
            {
                "type": "session",
                "version": 3,
                "id": session_id,
                "timestamp": _iso(1_767_607_200_000),
                "cwd": "/home/dev/project",
            }
        )


def generate(profile: Profile, seed: int, out_dir: Path) -> Path:
    """Write one session file (and its ``.meta.json``); returns the file's path."""
    gen = Generator(profile, seed)
    gen.run()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{profile.name}.jsonl"
    data = b"\n".join([gen.header(seed), *gen.lines, b""])
    target.write_bytes(data)
    meta = {
        "profile": profile.name,
        "seed": seed,
        "entries": gen.count,
        "bytes": len(data),
        "pathLength": len(gen.path),
        "leafId": gen.path[-1][0],
        "compactions": gen.compactions,
        "branches": gen.branches,
    }
    (out_dir / f"{profile.name}.meta.json").write_bytes(
        orjson.dumps(meta, option=orjson.OPT_INDENT_2)
    )
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--profile", choices=[*PROFILES, "all"], default="all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    names = list(PROFILES) if args.profile == "all" else [args.profile]
    for name in names:
        started = time.perf_counter()
        path = generate(PROFILES[name], args.seed, args.out)
        size = path.stat().st_size
        print(f"{path}: {size / 1e6:.1f} MB in {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
