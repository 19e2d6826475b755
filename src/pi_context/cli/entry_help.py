"""What bare ``pictx`` tells a newcomer before any command module is imported.

* :data:`AGENT_HELP`: the agent's own options, shown by ``pictx --help`` under the list of
  subcommands (the agent is what bare ``pictx [options] [messages]`` runs, so its options are
  the ones a user looks for first). Plain text, so ``--help`` imports nothing of the agent;
  ``tests/cli/test_entry_help.py`` keeps it equal to ``pictx chat``'s options.
* :func:`mistyped_command`: ``pictx sesion info x`` names a subcommand that does not exist,
  close to one that does; it must not silently become a prompt to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["AGENT_HELP", "mistyped_command"]

AGENT_HELP = """\b
Agent (bare `pictx [OPTIONS] [MESSAGES]...`, same as `pictx chat`):
  -p, --print                 One-shot: print the final answer.
  --mode [text|json|rpc]      json: every event as a JSON line; rpc: pi's
                              JSON-lines protocol on stdin/stdout.
  -c, --continue              Continue the newest session of this project.
  -r, --resume                Pick a session of this project to resume.
  --session PATH|ID           Open a session file or id (prefix), or URL#ID:
                              a session of a store.
  --tenant T                  The tenant of a --session URL#ID stored session.
  --session-dir DIR           Keep sessions in DIR.
  --no-session                Do not save the session.
  --use-session-cwd           Open a session recorded in another directory
                              without asking (its tools run there).
  --model SPEC                provider/model (see `pictx models`).
  --models LIST               Models Ctrl+P cycles through (patterns, globs,
                              :level); overrides enabledModels.
  --provider NAME             Look the --model name up in this provider.
  --api-key KEY               API key for the model's provider (this run
                              only, never saved).
  --session-id ID             Open the project's session with this id, or
                              start a new one with it.
  --fork PATH|ID              Copy a session into a new one of this directory.
  --list-models [SEARCH]      List the models with a key and exit.
  --offline                   No network at startup (also PI_OFFLINE=1).
  --verbose                   Interactive: show the startup details (context
                              files, skills, extensions, scope).
  -t, --tools LIST            Only these tools (names, a* patterns), or +x,-y.
  -nt, --no-tools             No tools at all (unless --tools lists them).
  -nbt, --no-builtin-tools    None of the default tools.
  -xt, --exclude-tools LIST   Never register these tools.
  --no-mcp                    Do not connect the MCP servers of mcp.json.
  --thinking LEVEL            off, minimal, low, medium, high, xhigh, max
                              (clamped to the model).
  -nc, --no-context-files     Do not load AGENTS.md / CLAUDE.md.
  -e, --extension PATH        Load an extension (repeatable; also with -ne).
  -ne, --no-extensions        No discovered or installed extensions.
  --skill PATH                Load a skill file or folder (repeatable; also
                              with -ns).
  -ns, --no-skills            No discovered or configured skills.
  --prompt-template PATH      Load a prompt template file or folder
                              (repeatable; also with -np).
  -np, --no-prompt-templates  No discovered or configured prompt templates.
  -a, --approve / -na, --no-approve
                              Trust / do not trust this project for this run.
  --system-prompt TEXT|FILE   Replace the default prompt.
  --append-system-prompt TEXT|FILE
                              Add to the prompt (repeatable).
  -n, --name TEXT             Name the session.
  --export SESSION.jsonl [OUT]
                              Write SESSION as HTML (OUT.jsonl: the branch as a
                              session) and exit.

\b
A message that starts with a command's name is sent as a prompt after `--`
or `-p`:  pictx -- "session info please"   pictx -p "models?"
"""

_CUTOFF = 0.8
"""How alike a first word and a command name must be to count as a typo (``sesion`` →
``session`` is 0.92; ``what`` → ``chat`` is 0.75 and stays a prompt)."""
_MIN_LENGTH = 4
"""Shorter words (``cat``, ``hat``) are too close to ``chat`` by chance."""


def mistyped_command(args: Sequence[str], names: Sequence[str]) -> str | None:
    """The command ``args[0]`` most likely misspells, or ``None`` when it reads as a prompt.

    Only a single lowercase word that is not itself a command counts; a quoted sentence
    (``pictx "sesion info"``), an option or a file argument never does.
    """
    if not args:
        return None
    first = args[0]
    if first in names or len(first) < _MIN_LENGTH:
        return None
    if not first.isascii() or not first.isalpha() or not first.islower():
        return None
    import difflib  # only for a word that could be a typo: most command lines never get here

    close = difflib.get_close_matches(first, names, n=1, cutoff=_CUTOFF)
    return close[0] if close else None
