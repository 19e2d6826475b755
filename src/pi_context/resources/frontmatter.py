"""Markdown frontmatter as pi reads it, parsed with YAML 1.2 semantics.

YAML 1.2 matters: under YAML 1.1 ``yes``/``on`` would be booleans, while pi only treats the
boolean ``true`` as enabling, e.g., ``disable-model-invocation``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_context.errors import FrontmatterError

if TYPE_CHECKING:
    from ruamel.yaml import YAML

__all__ = ["FrontmatterError", "parse_frontmatter", "strip_frontmatter"]


def _normalize(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split(text: str) -> tuple[str | None, str]:
    text = _normalize(text)
    if not text.startswith("---"):
        return None, text
    end = text.find("\n---", 3)
    if end == -1:
        return None, text
    return text[4:end], text[end + 4 :]


def _yaml() -> YAML:
    # The YAML parser loads with the first frontmatter that has something to parse; a project
    # without skills or prompt templates never needs it.
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    return yaml


def _describe(exc: Exception) -> str:
    """One line for a YAML error, with the line and column in the markdown file.

    The frontmatter starts on the file's second line (after ``---``); the parser counts from
    the frontmatter's first line, from zero.
    """
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if not isinstance(problem, str) or not problem:
        return " ".join(str(exc).split())
    where = f" at line {mark.line + 2}, column {mark.column + 1}" if mark is not None else ""
    return f"invalid YAML frontmatter{where}: {problem}"


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """``(frontmatter, body)``; no (closed) frontmatter gives ``({}, whole text)``.

    The body after a frontmatter block is trimmed. Raises :class:`FrontmatterError` on a YAML
    syntax error; a document that is not a mapping counts as empty.
    """
    raw, body = _split(text)
    if raw is None:
        return {}, body
    from ruamel.yaml.error import YAMLError

    try:
        data = _yaml().load(raw + "\n")
    except (YAMLError, ValueError) as exc:  # ValueError: e.g. a bad scalar
        raise FrontmatterError(_describe(exc)) from exc
    if not isinstance(data, dict):
        data = {}
    return {str(k): v for k, v in data.items()}, body.strip()


def strip_frontmatter(text: str) -> str:
    """The body only (BOM stripped, newlines normalized, trimmed when frontmatter existed)."""
    raw, body = _split(text)
    return body if raw is None else body.strip()
