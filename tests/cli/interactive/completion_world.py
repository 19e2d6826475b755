"""The tree and the inputs of the ``@`` / Tab completion comparison with pi 1.6.0
(:mod:`.record_pi_completion` records pi's answers; ``test_completion_pi`` compares)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["AT_QUERIES", "FILES", "TAB_PREFIXES", "TEXTS", "build_world"]

FILES = (
    ".gitignore",
    ".env.example",
    "README.md",
    "readme-old.txt",
    "Makefile",
    "docs/guide.md",
    "docs/Readme.rst",
    "docs/api/index.md",
    "src/main.py",
    "src/main_test.py",
    "src/lib/util.py",
    "src/lib/readme_helpers.py",
    "src/mainly/x.txt",
    "my notes/todo list.md",
    "my notes/readme.md",
    "node_modules/readme-lib/README.md",
    "build/out/readme.log",
)
GITIGNORE = "node_modules/\nbuild/\n"

AT_QUERIES = (
    "@",
    "@read",
    "@Read",
    "@main",
    "@src/",
    "@src/ma",
    "@src/lib",
    "@lib/u",
    "@docs/api/",
    "@todo",
    '@"my',
    '@"todo',
    "@nothing-matches",
    "@.env",
)
TAB_PREFIXES = (
    "",
    "./",
    "s",
    "src/",
    "src/m",
    "./src/li",
    "my",
    "@sr",
    '"my no',
    "docs/../sr",
    "missing/x",
    "R",
)
TEXTS = (
    "look at @src/ma",
    "(@foo",
    "mail a@b",
    'see @"my di',
    "!cat ./sr",
    "app/[id]/pa",
    "x=@a",
    "`@src/x",
    "plain words",
    'open "my no',
)


def build_world(root: Path) -> Path:
    for name in FILES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
    (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    (root / ".git").mkdir(exist_ok=True)
    (root / ".git" / "config").write_text("", encoding="utf-8")
    return root
