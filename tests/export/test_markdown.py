"""The export's Markdown subset: useful markup, nothing unsafe."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pi_context.export.markdown import markdown_to_html


def test_blocks_and_inline_markup() -> None:
    text = "# Plan\n\nDo **this** and *that* with `x<y`.\n\n- one\n- two\n\n1. first\n2. second\n\n```py\nif a < b:\n    pass\n```\nSee [docs](https://example.org/a?b=1&c=2)."
    assert markdown_to_html(text) == (
        "<h1>Plan</h1>"
        "<p>Do <strong>this</strong> and <em>that</em> with <code>x&lt;y</code>.</p>"
        "<ul><li>one</li><li>two</li></ul>"
        "<ol><li>first</li><li>second</li></ol>"
        '<pre class="code" data-lang="py"><code>if a &lt; b:\n    pass</code></pre>'
        '<p>See <a href="https://example.org/a?b=1&amp;c=2">docs</a>.</p>'
    )


def test_no_markup_or_script_links_survive() -> None:
    html = markdown_to_html('<img src=x onerror="alert(1)"> [x](javascript:alert(1)) **<b>**')
    assert "<img" not in html
    assert "<b>" not in html
    assert "javascript:" in html  # left as text
    assert "<a " not in html


def test_unclosed_fence_keeps_the_rest_as_code() -> None:
    assert (
        markdown_to_html("```\ncode <here>")
        == '<pre class="code"><code>code &lt;here&gt;</code></pre>'
    )


@given(st.text())
def test_never_emits_a_tag_it_does_not_own(text: str) -> None:
    html = markdown_to_html(text)
    allowed = {
        "p",
        "br",
        "ul",
        "ol",
        "li",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "pre",
        "code",
        "strong",
        "em",
        "a",
    }
    for tag in re.findall(r"</?([a-zA-Z][a-zA-Z0-9]*)", html):
        assert tag in allowed
