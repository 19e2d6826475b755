"""A scripted model for driving the CLI without a provider (a testing aid).

``pictx --model scripted:replies.json`` (or ``PICTX_SCRIPTED_MODEL=replies.json`` when no
``--model`` is given) answers every model request, including compaction and branch-summary
requests, with the next reply of the file, in order. The file holds a JSON list; each item is
a string (a plain text answer) or an object::

    {"text": "...", "thinking": "...",
     "toolCalls": [{"name": "bash", "arguments": {"command": "ls"}}],
     "usage": {"input": 1200, "output": 40, "cacheRead": 0, "cacheWrite": 1200},
     "delay": 0.5,
     "error": "boom", "errorKind": "transient"}

``delay`` (seconds) makes a reply slow enough to abort. When the script runs out, the model
answers ``(script exhausted)`` instead of failing, so a terminal session stays usable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from pi_context import _json
from pi_context.errors import ProviderErrorKind, ResourceError
from pi_context.model import ModelInfo, ModelRequest

if TYPE_CHECKING:
    from pi_context.testing import ScriptedModel, ScriptedReply

__all__ = ["SCRIPTED_ENV", "SCRIPTED_PREFIX", "load_scripted_model", "scripted_spec"]

SCRIPTED_PREFIX: Final = "scripted:"
SCRIPTED_ENV: Final = "PICTX_SCRIPTED_MODEL"
_KINDS: Final = ("context_overflow", "transient", "authentication", "aborted", "other")


def scripted_spec(model_spec: str | None, env: Mapping[str, str] | None = None) -> Path | None:
    """The replies file named by ``--model scripted:<file>`` or ``$PICTX_SCRIPTED_MODEL``."""
    if model_spec is not None:
        return (
            Path(model_spec[len(SCRIPTED_PREFIX) :])
            if model_spec.startswith(SCRIPTED_PREFIX)
            else None
        )
    value = (os.environ if env is None else env).get(SCRIPTED_ENV)
    return Path(value) if value else None


def _int(item: Mapping[str, Any], key: str) -> int:
    value = item.get(key, 0)
    return int(value) if isinstance(value, int | float) else 0


def _reply(item: Any, where: str) -> ScriptedReply:
    from pi_context.testing import failure, reply

    if isinstance(item, str):
        return reply(item)
    if not isinstance(item, dict):
        raise ResourceError(f"{where}: a reply must be a string or an object")
    if isinstance(item.get("error"), str):
        kind = item.get("errorKind", "other")
        if kind not in _KINDS:
            raise ResourceError(f"{where}: errorKind must be one of {', '.join(_KINDS)}")
        return failure(item["error"], cast(ProviderErrorKind, kind))
    calls = item.get("toolCalls", [])
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls
    ):
        raise ResourceError(f"{where}: toolCalls must be a list of {{name, arguments}} objects")
    usage = item.get("usage", {})
    if not isinstance(usage, dict):
        raise ResourceError(f"{where}: usage must be an object")
    delay = item.get("delay", 0)
    return reply(
        item.get("text") if isinstance(item.get("text"), str) else None,
        thinking=item.get("thinking") if isinstance(item.get("thinking"), str) else None,
        tool_calls=[(c["name"], dict(c.get("arguments") or {})) for c in calls],
        input_tokens=_int(usage, "input"),
        output_tokens=_int(usage, "output"),
        cache_read=_int(usage, "cacheRead"),
        cache_write=_int(usage, "cacheWrite"),
        delay=float(delay) if isinstance(delay, int | float) else 0.0,
    )


def _exhausted(_request: ModelRequest) -> ScriptedReply:
    from pi_context.testing import reply

    return reply("(script exhausted)")


def load_scripted_model(path: str | Path, *, context_window: int = 128_000) -> ScriptedModel:
    """A :class:`~pi_context.testing.ScriptedModel` playing the replies in ``path``."""
    # the fakes load only when a script is played, not on every start of the agent
    from pi_context.testing import ScriptedModel

    file = Path(path)
    try:
        data = _json.loads(file.read_bytes())
    except OSError as exc:
        raise ResourceError(f"cannot read scripted replies: {exc.strerror}", path=file) from exc
    except ValueError as exc:
        raise ResourceError(f"scripted replies are not valid JSON: {exc}", path=file) from exc
    if not isinstance(data, list):
        raise ResourceError("scripted replies must be a JSON list", path=file)
    replies = [_reply(item, f"{file}: reply {n}") for n, item in enumerate(data, start=1)]
    info = ModelInfo(
        provider="scripted",
        id=file.stem,
        api="scripted",
        context_window=context_window,
        max_tokens=16_384,
        name=f"scripted ({file.name})",
    )
    model = ScriptedModel(list(replies), model_info=info)
    model.add(*([_exhausted] * 1000))
    return model
