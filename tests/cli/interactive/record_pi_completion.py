"""Record pi 1.6.0's ``@`` and Tab completions for the comparison world (run by hand; tests
never need pi).

::

    python -m tests.cli.interactive.record_pi_completion NODE PI_TUI_DIR

builds :mod:`.completion_world` in a temporary folder and asks pi-tui's completion provider
(``PI_TUI_DIR``: the ``@earendil-works/pi-tui`` package of pi 1.6.0, e.g.
``node_modules/@earendil-works/pi-tui``) what it offers for every ``@`` query (as typed) and Tab
prefix, which word it completes in each text, and the line after choosing the first entry;
writes ``tests/data/completion/pi-1.6.0.json``. pi lists the tree with ``fd``; the stand-in
written here answers as ``fd`` does for this small tree (names matched by pi's pattern, smart
case, directories with a ``/`` after them, ``.git`` and the ignored directories left out), so
pi's own matching, ranking, quoting and insertion are what is recorded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.cli.interactive.completion_world import AT_QUERIES, TAB_PREFIXES, TEXTS, build_world

OUT = Path(__file__).resolve().parents[2] / "data" / "completion" / "pi-1.6.0.json"

_FAKE_FD = r"""#!/usr/bin/env python3
import os, re, sys
args = sys.argv[1:]
base, depth, full, pattern = ".", None, False, None
i = 0
while i < len(args):
    a = args[i]
    if a == "--base-directory": base = args[i + 1]; i += 2; continue
    if a == "--max-depth": depth = int(args[i + 1]); i += 2; continue
    if a in ("--max-results", "--type", "--exclude"): i += 2; continue
    if a == "--full-path": full = True; i += 1; continue
    if a.startswith("--"): i += 1; continue
    pattern = a; i += 1
ignored = set()
for start in [os.path.abspath(base)] + [p for p in [os.path.dirname(os.path.abspath(base))]]:
    try:
        ignored |= {l.strip().rstrip("/") for l in open(os.path.join(start, ".gitignore")) if l.strip()}
    except OSError:
        pass
flags = 0 if pattern and pattern != pattern.lower() else re.IGNORECASE
regex = re.compile(pattern, flags) if pattern else None
out = []
root = os.path.abspath(base)
for here, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if d != ".git" and d not in ignored]
    rel_here = os.path.relpath(here, root)
    level = 0 if rel_here == "." else rel_here.count(os.sep) + 1
    if depth is not None and level + 1 > depth:
        dirs[:] = []
        if level + 1 > depth: continue
    for name, is_dir in [(d, True) for d in dirs] + [(f, False) for f in files]:
        rel = name if rel_here == "." else os.path.join(rel_here, name)
        target = os.path.join(root, rel) if full else name
        if regex is None or regex.search(target):
            out.append(rel + ("/" if is_dir else ""))
sys.stdout.write("".join(line + "\n" for line in out))
"""

_NODE = r"""
import { readFileSync } from "fs";
const [tuiDir, root, fd] = process.argv.slice(2);
const { CombinedAutocompleteProvider } = await import(tuiDir + "/dist/autocomplete.js");
const spec = JSON.parse(readFileSync(0, "utf-8"));
const provider = new CombinedAutocompleteProvider([], root, fd);
const signal = new AbortController().signal;
async function ask(text, force) {
  const found = await provider.getSuggestions([text], 0, text.length, { signal, force });
  if (!found) return { items: [], applied: null };
  const items = found.items.map((i) => [i.value, i.label, i.description ?? ""]);
  const done = provider.applyCompletion([text], 0, text.length, found.items[0], found.prefix);
  return { items, applied: [done.lines[0], done.cursorCol] };
}
const out = { at: {}, tab: {}, words: {} };
for (const q of spec.at) out.at[q] = await ask(q, false);
for (const t of spec.tab) out.tab[t] = await ask(t, true);
for (const t of spec.texts) out.words[t] = [provider.extractAtPrefix(t), provider.extractPathPrefix(t, true)];
console.log(JSON.stringify(out));
"""


def main() -> None:
    node, tui = sys.argv[1], str(Path(sys.argv[2]).resolve())
    with tempfile.TemporaryDirectory() as scratch:
        root = build_world(Path(scratch) / "world")
        fd = Path(scratch) / "fd"
        fd.write_text(_FAKE_FD, encoding="utf-8")
        fd.chmod(0o755)
        script = Path(scratch) / "ask.mjs"
        script.write_text(_NODE, encoding="utf-8")
        spec = {"at": list(AT_QUERIES), "tab": list(TAB_PREFIXES), "texts": list(TEXTS)}
        done = subprocess.run(
            [node, str(script), tui, str(root), str(fd)],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            check=True,
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(json.loads(done.stdout), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
