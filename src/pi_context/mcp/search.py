"""BM25 ranking of tool metadata, for ``tool_search``.

Each tool is three fields: its name, its namespace text (the server's namespace, description
and instructions) and a text field (the description plus every ``description`` and property
name in its parameter schema, followed through ``properties``, ``items``, ``anyOf``/``oneOf``/
``allOf`` and local ``$ref``\\s). Terms are normalized (NFC, camelCase split, lower case,
punctuation dropped, English stop words dropped, a naive singular), so ``listIssues`` finds
``list_issue``. A term scores 3 when it is in the name, 0.5 when in the namespace, plus BM25
(k1 1.2, b 0.75) over the text; an exact name wins, then the number of matched terms, then
the score, ties keeping registration order.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["SearchDocument", "rank_tools", "tokenize"]

K1: Final = 1.2
B: Final = 0.75
_STOP: Final = frozenset(
    (
        *("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it"),
        *("of", "on", "or", "that", "the", "this", "to", "with"),
    )
)
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD: Final = re.compile(r"[^\w]|_", re.UNICODE)


def _singular(word: str) -> str:
    if not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("es") and re.search(r"(ch|sh|ss|x|z)es$", word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    text = unicodedata.normalize("NFC", text)
    text = _CAMEL.sub(" ", text).lower()
    words = _NON_WORD.sub(" ", text).split()
    return [_singular(w) for w in words if w not in _STOP]


def _schema_text(schema: Any, root: Any, out: list[str], depth: int = 0) -> None:
    if depth > 20 or not isinstance(schema, Mapping):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        _schema_text(target, root, out, depth + 1)
    if isinstance(schema.get("description"), str):
        out.append(schema["description"])
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key, sub in props.items():
            out.append(str(key))
            _schema_text(sub, root, out, depth + 1)
    items = schema.get("items")
    if isinstance(items, Mapping):
        _schema_text(items, root, out, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or ():
            _schema_text(sub, root, out, depth + 1)


@dataclass(frozen=True, slots=True)
class SearchDocument:
    name: str
    description: str
    parameters: Mapping[str, Any]
    namespace: str = ""


def rank_tools(query: str, docs: Sequence[SearchDocument], limit: int) -> list[SearchDocument]:
    """The best ``limit`` documents for ``query`` (zero scores left out)."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or not docs:
        return []
    fields = []
    for doc in docs:
        parts = [doc.description]
        _schema_text(doc.parameters, doc.parameters, parts)
        text = tokenize(" ".join(parts))
        fields.append((set(tokenize(doc.name)), set(tokenize(doc.namespace)), text))
    count = len(docs)
    avg = sum(len(f[2]) for f in fields) / count or 1.0
    df = {t: sum(1 for f in fields if t in f[0] or t in f[1] or t in f[2]) for t in terms}
    idf = {t: math.log(1 + (count - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    normalized = " ".join(tokenize(query))
    scored = []
    for index, (doc, (name, space, text)) in enumerate(zip(docs, fields, strict=True)):
        norm = K1 * (1 - B + B * len(text) / avg)
        score, matched = 0.0, 0
        for term in terms:
            tf = text.count(term)
            weight = 3.0 * (term in name) + 0.5 * (term in space) + tf * (K1 + 1) / (tf + norm)
            if weight > 0:
                matched += 1
                score += idf[term] * weight
        last = doc.name.rsplit("__", 1)[-1]
        last_terms = set(tokenize(last))
        if last_terms and last_terms <= set(terms):
            score += sum(idf[t] for t in terms if t in last_terms)
        if score <= 0:
            continue
        exact = normalized in (" ".join(tokenize(doc.name)), " ".join(tokenize(last)))
        scored.append((not exact, -matched, -score, index, doc))
    scored.sort(key=lambda item: item[:4])
    return [item[4] for item in scored[:limit]]
