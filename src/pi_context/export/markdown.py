"""A small, safe Markdown-to-HTML converter for answers in the HTML export.

Covers what models write most: fenced code blocks, headings, bullet and numbered lists,
paragraphs, ``inline code``, **bold**, *italic* and ``[text](https://…)`` links. Everything is
HTML-escaped first, so no markup from a session reaches the page; only ``http(s)`` links become
anchors. Anything else stays literal text.
"""

from __future__ import annotations

import html
import re

__all__ = ["markdown_to_html"]

_FENCE = re.compile(r"^(```|~~~)\s*([\w+-]*)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d{1,9}[.)]\s+(.*)$")
_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s)]+)\)")


def _inline(text: str) -> str:
    """Escape, then mark up code spans (left alone inside), bold, italic and links."""
    parts = _CODE.split(text)
    out = []
    for index, part in enumerate(parts):
        if index % 2:
            out.append(f"<code>{html.escape(part)}</code>")
            continue
        escaped = html.escape(part, quote=True)
        # emphasis is marked up in the text around links and in link texts, never in a URL
        position = 0
        for link in _LINK.finditer(escaped):
            out.append(_emphasis(escaped[position : link.start()]))
            out.append(f'<a href="{link.group(2)}">{_emphasis(link.group(1))}</a>')
            position = link.end()
        out.append(_emphasis(escaped[position:]))
    return "".join(out)


def _emphasis(text: str) -> str:
    return _ITALIC.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", text))


def markdown_to_html(text: str) -> str:
    """HTML for ``text`` (block elements only, no wrapper)."""
    out: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []
    list_tag = ""
    lines = text.replace("\r\n", "\n").split("\n")

    def flush() -> None:
        nonlocal list_tag
        if paragraph:
            out.append("<p>" + "<br>".join(_inline(line) for line in paragraph) + "</p>")
            paragraph.clear()
        if items:
            out.append(f"<{list_tag}>" + "".join(f"<li>{i}</li>" for i in items) + f"</{list_tag}>")
            items.clear()
            list_tag = ""

    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence:
            flush()
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].startswith(fence.group(1)):
                body.append(lines[index])
                index += 1
            lang = f' data-lang="{html.escape(fence.group(2))}"' if fence.group(2) else ""
            out.append(
                f'<pre class="code"{lang}><code>{html.escape(chr(10).join(body))}</code></pre>'
            )
            index += 1
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        numbered = _NUMBERED.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif bullet or numbered:
            tag = "ul" if bullet else "ol"
            if paragraph or (list_tag and list_tag != tag):
                flush()
            list_tag = tag
            match = bullet or numbered
            assert match is not None
            items.append(_inline(match.group(1)))
        elif not line.strip():
            flush()
        elif items and line.startswith((" ", "\t")):
            items[-1] += "<br>" + _inline(line.strip())
        else:
            if items:
                flush()
            paragraph.append(line)
        index += 1
    flush()
    return "".join(out)
