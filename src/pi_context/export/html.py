"""A self-contained HTML view of a session: everything inline, nothing fetched at view time.

The page shows

* a header with the session's name, id, cwd, counts and token/cost/cache totals;
* the session tree (every entry; the active path marked, the leaf highlighted, labels shown);
* the active branch in order: user prompts, assistant text, dimmed thinking, tool calls with
  their results (long output collapsed), system-prompt patches, branch summaries and every
  compaction boundary, whose replaced entries are grouped in an expandable block in place;
* the system prompt as replayed at the leaf (what the model is told right now).

Entries off the active branch are in the page too (hidden); clicking one in the tree shows it.

Nothing from the session can change how the page is parsed or what it loads: text is
HTML-escaped, the embedded JSON writes ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\u`` escapes
(so no ``</script>`` or ``<!--`` can appear in it), and a Content-Security-Policy allows only the
page's own inline script and style (by hash), ``data:`` images and no network at all.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pi_context import _json
from pi_context.export.document import (
    SessionDocument,
    entry_kind,
    entry_preview,
    export_target,
    text_of_content,
    tree_marker,
)
from pi_context.export.markdown import markdown_to_html
from pi_context.prompt.replay import SystemState, replay_system_state
from pi_context.tokens import estimate_tokens

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "default_html_name",
    "embedded_json",
    "export_html",
    "render_html",
    "replay_system_prompt",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_LINES = 12
_LONG_CHARS = 1500


def default_html_name(session_path: Path | None) -> str:
    """pi's default export name: ``pi-session-<file basename>.html``."""
    stem = session_path.stem if session_path is not None else "in-memory"
    return f"pi-session-{stem}.html"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _fmt_int(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, int | float) else "0"


def _pre(text: str, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f"<pre{klass}>{_e(text)}</pre>"


def _collapsible(text: str, label: str) -> str:
    """Long text is collapsed behind a summary line showing its first lines."""
    lines = text.split("\n")
    if len(lines) <= _LONG_LINES and len(text) <= _LONG_CHARS:
        return _pre(text)
    head = "\n".join(lines[:4])[:400]
    return (
        f'<details class="long"><summary>{_e(label)} — {len(lines)} lines, '
        f"{_fmt_int(len(text))} chars (expand)</summary>{_pre(text)}</details>"
        f"{_pre(head + chr(10) + '…', 'preview')}"
    )


def _blocks(content: Any) -> list[dict[str, Any]]:
    """The content blocks of a content value (a bare string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _content_html(content: Any) -> str:
    if isinstance(content, str):
        return _pre(content) if content else ""
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                parts.append(_pre(str(block.get("text", ""))))
            elif kind == "image":
                mime = _e(block.get("mimeType", "image/png"))
                data = _e(block.get("data", ""))
                parts.append(
                    f'<img class="attached" alt="attached image" src="data:{mime};base64,{data}">'
                )
    return "".join(parts)


def _usage_html(usage: Any) -> str:
    if not isinstance(usage, dict):
        return ""
    cost = usage.get("cost", {})
    total = cost.get("total", 0) if isinstance(cost, dict) else 0
    return (
        f'<span class="usage">in {_fmt_int(usage.get("input"))} · out {_fmt_int(usage.get("output"))}'
        f" · cache read {_fmt_int(usage.get('cacheRead'))} · cache write {_fmt_int(usage.get('cacheWrite'))}"
        f" · ${float(total or 0):.4f}</span>"
    )


def _tool_result_html(result: Mapping[str, Any]) -> str:
    texts = [
        str(b.get("text", ""))
        for b in _blocks(result.get("content"))
        if isinstance(b, dict) and b.get("type") == "text"
    ]
    body = "\n".join(texts)
    cls = "tool-result error" if result.get("isError") else "tool-result"
    images = _content_html([b for b in _blocks(result.get("content")) if b.get("type") == "image"])
    return f'<div class="{cls}">{_collapsible(body, "output")}{images}</div>'


def _assistant_html(message: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for block in _blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text":
            parts.append(
                f'<div class="answer">{markdown_to_html(str(block.get("text", "")))}</div>'
            )
        elif kind == "thinking":
            text = (
                "[redacted thinking]" if block.get("redacted") else str(block.get("thinking", ""))
            )
            parts.append(
                f'<details class="thinking" open><summary>thinking</summary>{_pre(text)}</details>'
            )
        elif kind == "toolCall":
            try:
                args = json.dumps(block.get("arguments", {}), indent=2, ensure_ascii=False)
            except RecursionError:  # nested too deep to indent: the compact spelling
                args = _json.js_stringify(block.get("arguments", {}))
            parts.append(
                f'<div class="tool-call" data-call="{_e(block.get("id", ""))}">'
                f'<span class="tool-name">{_e(block.get("name", ""))}</span>{_pre(args, "args")}</div>'
            )
    if message.get("stopReason") in ("error", "aborted"):
        reason = message.get("errorMessage") or f"Request {message.get('stopReason')}"
        parts.append(f'<div class="error">{_e(reason)}</div>')
    return "".join(parts)


def _system_html(message: Mapping[str, Any]) -> str:
    parts: list[str] = []
    sections = message.get("sections")
    if isinstance(sections, dict) and sections:
        names = ", ".join(f"{k} (removed)" if v is None else k for k, v in sections.items())
        inner = "".join(
            f'<div class="section"><b>{_e(k)}</b>{_pre(v) if isinstance(v, str) else " removed"}</div>'
            for k, v in sections.items()
        )
        parts.append(f"<details><summary>sections: {_e(names)}</summary>{inner}</details>")
    content = message.get("content")
    text = content if isinstance(content, str) else text_of_content(content)
    if text:
        parts.append(_collapsible(text, "system prompt"))
    added = [t.get("name", "?") for t in message.get("toolsAdded", []) or [] if isinstance(t, dict)]
    removed = [
        t.get("name", "?") for t in message.get("toolsRemoved", []) or [] if isinstance(t, dict)
    ]
    if added or removed:
        tools = " ".join([*(f"+{n}" for n in added), *(f"-{n}" for n in removed)])
        parts.append(f'<div class="meta">tools: {_e(tools)}</div>')
    return "".join(parts)


def _file_lists(details: Any) -> str:
    if not isinstance(details, dict):
        return ""
    out = []
    for key, title in (("readFiles", "read"), ("modifiedFiles", "modified")):
        files = details.get(key)
        if isinstance(files, list) and files:
            out.append(f'<div class="meta">{title}: {_e(", ".join(map(str, files)))}</div>')
    return "".join(out)


def _entry_html(
    entry: Mapping[str, Any], doc: SessionDocument, labels: Mapping[str, str], extra: str = ""
) -> str:
    eid = str(entry["id"])
    kind = entry_kind(entry)
    message = entry.get("message") if entry.get("type") == "message" else None
    body = ""
    tokens = ""
    if isinstance(message, dict):
        tokens = f'<span class="tokens">~{_fmt_int(estimate_tokens(message))} tok</span>'
        role = message.get("role")
        if role == "assistant":
            body = _assistant_html(message) + _usage_html(message.get("usage"))
            body += (
                f'<div class="meta">{_e(message.get("provider"))}/{_e(message.get("model"))}</div>'
            )
        elif role == "toolResult":
            body = f'<div class="meta">result of {_e(message.get("toolName"))} ({_e(message.get("toolCallId"))})</div>'
            body += _tool_result_html(message)
        elif role == "system":
            body = _system_html(message)
        elif role == "bashExecution":
            body = _pre(f"$ {message.get('command', '')}") + _collapsible(
                str(message.get("output", "")), "output"
            )
        else:
            body = _content_html(message.get("content"))
    elif entry.get("type") == "compaction":
        before = entry.get("tokensBefore")
        body = (
            f'<div class="boundary-title">Compaction — context was ~{_fmt_int(before)} tokens; '
            f'kept from <a href="#e-{_e(entry.get("firstKeptEntryId"))}">{_e(entry.get("firstKeptEntryId"))}</a>'
            f"{' (hook)' if entry.get('fromHook') else ''}</div>"
            f"{extra}{_collapsible(str(entry.get('summary', '')), 'summary')}{_file_lists(entry.get('details'))}"
            f"{_usage_html(entry.get('usage'))}"
        )
    elif entry.get("type") == "branch_summary":
        source = entry.get("fromId")
        body = (
            f'<div class="boundary-title">Branch summary of the branch left at '
            f'<a href="#e-{_e(source)}">{_e(source)}</a></div>'
            f"{_pre(str(entry.get('summary', '')))}{_file_lists(entry.get('details'))}{_usage_html(entry.get('usage'))}"
        )
    elif entry.get("type") == "custom_message":
        body = f'<div class="meta">{_e(entry.get("customType"))}</div>' + _content_html(
            entry.get("content")
        )
    else:
        body = f'<div class="meta">{_e(entry_preview(entry))}</div>'
    label = f'<span class="label">{_e(labels[eid])}</span>' if eid in labels else ""
    stamp = _e(entry.get("timestamp", ""))
    return (
        f'<article class="entry {_e(kind)}" id="e-{_e(eid)}" data-id="{_e(eid)}">'
        f'<div class="entry-head"><span class="kind">{_e(kind)}</span>{label}{tokens}'
        f'<span class="id">{_e(eid)}</span><time>{stamp}</time></div>{body}</article>'
    )


def replay_system_prompt(path: Sequence[Mapping[str, Any]]) -> SystemState:
    """The prompt and tool state the model is given at the end of ``path``.

    As the projection builds it: the latest compaction's stored snapshot replaces everything
    before it, then every later system message is replayed on top (sections patched by name,
    ``content`` appended, tools added and removed).
    """
    messages: list[Mapping[str, Any]] = []
    for entry in path:
        message = entry.get("message")
        if entry.get("type") == "compaction":
            snapshot = entry.get("systemMessage")
            messages = [snapshot] if isinstance(snapshot, dict) else []
        elif (
            entry.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "system"
        ):
            messages.append(message)
    return replay_system_state(messages)


def _totals(doc: SessionDocument) -> dict[str, float]:
    totals = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "cost": 0.0}

    def add(usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for key in ("input", "output", "cacheRead", "cacheWrite"):
            value = usage.get(key)
            if isinstance(value, int | float):
                totals[key] += value
        cost = usage.get("cost")
        if isinstance(cost, dict) and isinstance(cost.get("total"), int | float):
            totals["cost"] += cost["total"]

    for entry in doc.entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict):
            if message.get("role") in ("assistant", "toolResult"):
                add(message.get("usage"))
        elif entry.get("type") in ("compaction", "branch_summary", "usage"):
            add(entry.get("usage"))
    return totals


def _header_html(doc: SessionDocument, path: Sequence[Mapping[str, Any]]) -> str:
    totals = _totals(doc)
    prompt_side = totals["input"] + totals["cacheRead"] + totals["cacheWrite"]
    hit = f"{100 * totals['cacheRead'] / prompt_side:.1f}%" if prompt_side else "–"
    roles: dict[str, int] = {}
    for entry in doc.entries:
        kind = entry_kind(entry)
        roles[kind] = roles.get(kind, 0) + 1
    context = 0
    for entry in reversed(path):
        message = entry.get("message")
        if (
            isinstance(message, dict)
            and message.get("role") == "assistant"
            and isinstance(message.get("usage"), dict)
        ):
            usage = message["usage"]
            context = int(usage.get("totalTokens") or 0) or sum(
                int(usage.get(k) or 0) for k in ("input", "output", "cacheRead", "cacheWrite")
            )
            break
    counts = ", ".join(f"{k} {v}" for k, v in sorted(roles.items()))
    name = doc.name()
    rows = [
        ("Session", name or "(unnamed)"),
        ("Id", doc.header.get("id", "")),
        ("Working directory", doc.header.get("cwd", "")),
        ("Created", doc.header.get("timestamp", "")),
        ("File", str(doc.path) if doc.path else "in-memory"),
        ("Entries", f"{len(doc.entries)} ({counts})"),
        ("Active branch", f"{len(path)} entries, leaf {doc.leaf_id or '–'}"),
        ("Context at leaf", f"{_fmt_int(context)} tokens (last response usage)"),
        (
            "Tokens",
            f"input {_fmt_int(totals['input'])} · output {_fmt_int(totals['output'])} · cache read "
            f"{_fmt_int(totals['cacheRead'])} · cache write {_fmt_int(totals['cacheWrite'])}",
        ),
        ("Cache hit ratio", hit),
        ("Cost", f"${totals['cost']:.4f}"),
    ]
    cells = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f'<header id="overview"><h1>{_e(name or "pictx session")}</h1><table>{cells}</table></header>'


def _tree_html(doc: SessionDocument, on_path: set[int], labels: Mapping[str, str]) -> str:
    """The tree; ``on_path`` holds the ``id()`` of the active path's entries (ids may repeat)."""
    leaf = doc.by_id.get(doc.leaf_id) if doc.leaf_id is not None else None
    rows = []
    for entry, depth in doc.preorder():
        eid = str(entry["id"])
        classes = ["node"]
        if id(entry) in on_path:
            classes.append("on-path")
        if entry is leaf:
            classes.append("leaf")
        marker = tree_marker(entry, leaf, id(entry) in on_path)
        label = f' <span class="label">{_e(labels[eid])}</span>' if eid in labels else ""
        rows.append(
            f'<li class="{" ".join(classes)}" data-depth="{depth}" data-id="{_e(eid)}">'
            f'<a href="#e-{_e(eid)}">{marker} <span class="kind">{_e(entry_kind(entry))}</span> '
            f"{_e(entry_preview(entry))}</a>{label}</li>"
        )
    return f'<nav id="tree"><h2>Session tree</h2><ul>{"".join(rows)}</ul></nav>'


def _branch_html(
    doc: SessionDocument, path: Sequence[dict[str, Any]], labels: Mapping[str, str]
) -> str:
    ranges = doc.replaced_ranges(path)
    starts = {start: (cid, end) for cid, (start, end) in ranges.items() if end > start}
    parts: list[str] = []
    index = 0
    while index < len(path):
        if index in starts:
            cid, end = starts[index]
            inner = "".join(
                _entry_html(e, doc, labels, _compaction_link(e, ranges)) for e in path[index:end]
            )
            parts.append(
                f'<details class="replaced" id="replaced-{_e(cid)}"><summary>{end - index} entries '
                f"replaced by compaction {_e(cid)} (expand to see them)</summary>{inner}</details>"
            )
            index = end
            continue
        entry = path[index]
        parts.append(_entry_html(entry, doc, labels, _compaction_link(entry, ranges)))
        index += 1
    return f'<main id="branch"><h2>Active branch</h2>{"".join(parts)}</main>'


def _compaction_link(entry: Mapping[str, Any], ranges: Mapping[str, tuple[int, int]]) -> str:
    if entry.get("type") != "compaction":
        return ""
    start, end = ranges.get(str(entry["id"]), (0, 0))
    if end <= start:
        return '<div class="meta">replaced no entries of this branch</div>'
    return (
        f'<div class="meta"><a class="show-replaced" href="#replaced-{_e(entry["id"])}">'
        f"{end - start} replaced entries</a> (shown collapsed above)</div>"
    )


def _prompt_html(path: Sequence[Mapping[str, Any]]) -> str:
    state = replay_system_prompt(path)
    if state.empty:
        return ""
    text = state.text
    tools = list(state.tools)
    tool_line = f'<div class="meta">tools: {_e(", ".join(tools))}</div>' if tools else ""
    return (
        f'<section id="system-prompt"><h2>System prompt at the leaf</h2>'
        f"<details><summary>{len(state.sections)} sections, {_fmt_int(len(text))} chars "
        f"(expand)</summary>{_pre(text)}</details>{tool_line}</section>"
    )


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1f21;background:#fafafa}
header{padding:12px 20px;background:#fff;border-bottom:1px solid #ddd}
header h1{margin:0 0 6px;font-size:20px} header th{text-align:left;padding-right:12px;color:#555}
.layout{display:flex;align-items:flex-start}
#tree{width:34%;max-height:100vh;overflow:auto;position:sticky;top:0;padding:8px;border-right:1px solid #ddd}
#tree ul{list-style:none;margin:0;padding:0;font:12px monospace}
#tree li a{color:#888;text-decoration:none;white-space:nowrap}
#tree li.on-path a{color:#1d1f21;font-weight:600} #tree li.leaf a{color:#0a6cff}
#content{flex:1;padding:8px 20px;min-width:0}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:13px/1.4 monospace}
.entry{background:#fff;border:1px solid #e3e3e3;border-radius:6px;margin:8px 0;padding:6px 10px}
.entry-head{font-size:12px;color:#666;display:flex;gap:10px}
.entry-head .id,.entry-head time{color:#aaa}
.entry.user{border-left:4px solid #0a6cff} .entry.assistant{border-left:4px solid #2e9d4f}
.entry.toolResult{border-left:4px solid #c58b00} .entry.system{border-left:4px solid #888}
.entry.compaction{border:2px dashed #b0417a;background:#fff5fa}
.entry.branch_summary{border:2px dashed #6a4fc9;background:#f7f5ff}
.boundary-title{font-weight:600}
.thinking{color:#888;font-style:italic} .tool-call{background:#f3f6fa;padding:4px 8px;border-radius:4px}
.tool-name{font-weight:600;font-family:monospace} .tool-result.error{color:#b00020}
.error{color:#b00020} .meta,.usage,.tokens{font-size:12px;color:#777}
.label{background:#ffe58a;border-radius:3px;padding:0 4px;font-size:12px}
details.replaced{border:1px solid #b0417a;border-radius:6px;margin:8px 0;padding:4px 8px;background:#fbf0f5}
details.replaced>summary{cursor:pointer;color:#b0417a;font-weight:600}
pre.preview{color:#999} details.long[open]+pre.preview{display:none}
.entry.off-branch{border-style:dotted} #off-branch h2{color:#888}
img.attached{max-width:320px;display:block}
.answer p{margin:4px 0} .answer pre.code{background:#f3f3f3;padding:6px;border-radius:4px}
.answer code{background:#f3f3f3;padding:0 3px;border-radius:3px;font-size:13px}
.answer h1,.answer h2,.answer h3{margin:8px 0 4px;font-size:16px}
"""

_JS = """
(function(){
  function reveal(id){
    var el=document.getElementById('e-'+id); if(!el) return;
    var off=el.closest('#off-branch'); if(off){off.hidden=false; el.hidden=false;}
    var d=el.closest('details'); while(d){d.open=true; d=d.parentElement.closest('details');}
    document.querySelectorAll('.entry.focus').forEach(function(x){x.classList.remove('focus')});
    el.classList.add('focus'); el.scrollIntoView({block:'center'});
  }
  document.querySelectorAll('#tree li').forEach(function(li){
    li.style.paddingLeft=(14*(+li.dataset.depth||0))+'px';
    li.addEventListener('click',function(ev){ev.preventDefault(); reveal(li.dataset.id);});
  });
  document.querySelectorAll('a.show-replaced').forEach(function(a){
    a.addEventListener('click',function(){
      var d=document.querySelector(a.getAttribute('href')); if(d) d.open=true;});
  });
  var h=location.hash;
  if(h==='#expand-all'){document.querySelectorAll('details').forEach(function(d){d.open=true});}
  else if(h.indexOf('#e-')===0){reveal(h.slice(3));}
  document.body.dataset.ready='1';
})();
"""


def _sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; script-src {_sha256_source(_JS)}; style-src {_sha256_source(_CSS)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
"""The page may run its own script and style (by hash), show ``data:`` images, nothing else."""

_JSON_UNSAFE = re.compile("[<>&\u2028\u2029]")


def embedded_json(value: Any) -> str:
    """JSON to embed in a ``<script type="application/json">`` element.

    ``<``, ``>`` and ``&`` (and the two JavaScript line terminators) are written as ``\\u``
    escapes: the same JSON value, but no sequence in it (``</script>``, ``<!--``) can change
    the HTML parser's state.
    """
    text = _json.dumps(value).decode("utf-8")
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render_html(doc: SessionDocument) -> str:
    """The complete HTML page for ``doc`` (a single string; no external resources)."""
    path = doc.active_path
    on_path = {id(e) for e in path}
    labels = doc.labels()
    off = [e for e in doc.entries if id(e) not in on_path]
    off_html = "".join(
        _entry_html(e, doc, labels).replace('class="entry ', 'hidden class="entry off-branch ', 1)
        for e in off
    )
    title = doc.name() or f"Session {doc.header.get('id', '')}"
    data = embedded_json(
        {"id": doc.header.get("id"), "leaf": doc.leaf_id, "path": [e["id"] for e in path]}
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f'{_header_html(doc, path)}<div class="layout">{_tree_html(doc, on_path, labels)}'
        f'<div id="content">{_prompt_html(path)}{_branch_html(doc, path, labels)}'
        f'<section id="off-branch" hidden><h2>Off the active branch</h2>{off_html}</section></div></div>'
        f'<script type="application/json" id="session-data">{data}</script>'
        f"<script>{_JS}</script></body></html>\n"
    )


def export_html(doc: SessionDocument, out: str | Path) -> Path:
    """Write the HTML page for ``doc`` to ``out`` and return the path."""
    target = export_target(out)
    # lone surrogates (valid in JSON strings, not in UTF-8) are shown as U+FFFD
    text = _SURROGATE.sub("\ufffd", render_html(doc))
    target.write_text(text, encoding="utf-8")
    return target
