"""``<agentDir>/models.json``: its parser and the model entries it makes.

pi's layout: ``{"providers": {id: {baseUrl, api, apiKey, headers, authHeader, models,
modelOverrides, compat}}}``. A built-in provider with only ``baseUrl`` reroutes its built-in
models (a proxy), ``models`` adds or replaces models, ``modelOverrides`` changes fields of
existing ones, and a new id defines a provider (an OpenAI-compatible local server, a proxy).
JSON comments are allowed. A broken file is ignored as a whole and the reasons are returned,
as pi does; key templates stay unresolved here (:mod:`.key_templates`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

from pi_context import _json
from pi_context.messages import ThinkingLevel
from pi_context.model import ModelCost, ModelInfo
from pi_context.providers.builtin_providers import (
    BUILTIN_PROVIDERS,
    SUPPORTED_APIS,
    ProviderSpec,
    provider_spec,
)
from pi_context.providers.catalog import BUILTIN_MODELS

_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)

__all__ = [
    "ModelEntry",
    "entries_from",
    "missing_windows",
    "parse_models_json",
    "templates_from",
]

_PROVIDER_KEYS = {
    "name",
    "baseUrl",
    "apiKey",
    "api",
    "headers",
    "compat",
    "authHeader",
    "models",
    "modelOverrides",
    "oauth",
}
_MEANINGFUL = (
    "baseUrl",
    "headers",
    "compat",
    "modelOverrides",
    "models",
    "apiKey",
    "oauth",
    "authHeader",
)


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """A model plus how to authenticate to it (templates are resolved at request time)."""

    info: ModelInfo
    api_key: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth_header: bool = False

    @property
    def key(self) -> str:
        return f"{self.info.provider}/{self.info.id}"


def _strip_comments(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments outside strings (pi accepts JSON with comments)."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_string = False
            i += 1
            continue
        if ch == '"':
            in_string = True
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _check_str(value: Any, where: str, errors: list[str]) -> None:
    if not isinstance(value, str) or not value:
        errors.append(f"{where}: must be a non-empty string")


def _check_model(model: Any, where: str, errors: list[str], *, need_id: bool) -> None:
    if not isinstance(model, dict):
        errors.append(f"{where}: must be an object")
        return
    if need_id or "id" in model:
        _check_str(model.get("id"), f"{where}.id", errors)
    for key in ("name", "api", "baseUrl"):
        if key in model:
            _check_str(model[key], f"{where}.{key}", errors)
    for key in ("contextWindow", "maxTokens"):
        if key in model:
            value = model[key]
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                errors.append(f"{where}.{key}: must be a positive number")
    if "reasoning" in model and not isinstance(model["reasoning"], bool):
        errors.append(f"{where}.reasoning: must be a boolean")
    if "cost" in model:
        cost = model["cost"]
        if not isinstance(cost, dict):
            errors.append(f"{where}.cost: must be an object")
        elif need_id:
            for key in ("input", "output", "cacheRead", "cacheWrite"):
                if not isinstance(cost.get(key), int | float) or isinstance(cost.get(key), bool):
                    errors.append(f"{where}.cost.{key}: must be a number")
    if "thinkingLevelMap" in model:
        levels = model["thinkingLevelMap"]
        if not isinstance(levels, dict) or any(
            key not in _LEVELS or not (value is None or isinstance(value, str))
            for key, value in levels.items()
        ):
            errors.append(
                f"{where}.thinkingLevelMap: must map thinking levels "
                f"({', '.join(_LEVELS)}) to a string or null"
            )
    if "compat" in model and not isinstance(model["compat"], dict):
        errors.append(f"{where}.compat: must be an object")
    if "inputLimits" in model and not isinstance(model["inputLimits"], dict):
        errors.append(f"{where}.inputLimits: must be an object")
    if "input" in model and (
        not isinstance(model["input"], list)
        or any(kind not in ("text", "image") for kind in model["input"])
    ):
        errors.append(f'{where}.input: must be a list of "text"/"image"')


def parse_models_json(text: str) -> tuple[dict[str, Any], list[str]]:
    """Parse and validate a models.json text: ``(providers, errors)``; any error empties it."""
    text = text.removeprefix("\ufeff")
    try:
        data = _json.loads(_strip_comments(text))
    except ValueError as exc:
        return {}, [f"Failed to parse models.json: {exc}"]
    errors: list[str] = []
    if not isinstance(data, dict) or not isinstance(data.get("providers"), dict):
        errors.append('providers: required object "providers"')
        return {}, ["Invalid models.json schema:\n  - " + "\n  - ".join(errors)]
    providers: dict[str, Any] = data["providers"]
    for pid, provider in providers.items():
        where = f"providers.{pid}"
        if not isinstance(provider, dict):
            errors.append(f"{where}: must be an object")
            continue
        for key in ("name", "baseUrl", "apiKey", "api"):
            if key in provider:
                _check_str(provider[key], f"{where}.{key}", errors)
        if "headers" in provider and (
            not isinstance(provider["headers"], dict)
            or not all(isinstance(v, str) for v in provider["headers"].values())
        ):
            errors.append(f"{where}.headers: must map names to strings")
        if "compat" in provider and not isinstance(provider["compat"], dict):
            errors.append(f"{where}.compat: must be an object")
        if "authHeader" in provider and not isinstance(provider["authHeader"], bool):
            errors.append(f"{where}.authHeader: must be a boolean")
        models = provider.get("models", [])
        if not isinstance(models, list):
            errors.append(f"{where}.models: must be an array")
            models = []
        for n, model in enumerate(models):
            _check_model(model, f"{where}.models[{n}]", errors, need_id=True)
        overrides = provider.get("modelOverrides", {})
        if not isinstance(overrides, dict):
            errors.append(f"{where}.modelOverrides: must be an object")
        else:
            for mid, override in overrides.items():
                _check_model(override, f"{where}.modelOverrides.{mid}", errors, need_id=False)
    if errors:
        return {}, ["Invalid models.json schema:\n  - " + "\n  - ".join(errors)]
    semantic: list[str] = []
    for pid, provider in providers.items():
        if not any(key in provider for key in _MEANINGFUL):
            semantic.append(
                f'Provider {pid}: must specify "baseUrl", "headers", "compat", '
                '"modelOverrides", or "models".'
            )
        if _known(pid):
            continue
        for model in provider.get("models", []):
            if not (model.get("api") or provider.get("api")):
                semantic.append(
                    f'Provider {pid}, model {model["id"]}: no "api" specified. '
                    "Set at provider or model level."
                )
            if not (model.get("baseUrl") or provider.get("baseUrl")):
                semantic.append(
                    f'Provider {pid}: "baseUrl" is required when defining custom models.'
                )
    if semantic:
        return {}, semantic
    return providers, []


def _apply_model_fields(info: ModelInfo, fields: Mapping[str, Any]) -> ModelInfo:
    changes: dict[str, Any] = {}
    mapping = {
        "name": "name",
        "api": "api",
        "baseUrl": "base_url",
        "reasoning": "reasoning",
        "contextWindow": "context_window",
        "maxTokens": "max_tokens",
    }
    for key, attr in mapping.items():
        if key in fields:
            value = fields[key]
            changes[attr] = int(value) if attr in ("context_window", "max_tokens") else value
    if "input" in fields:
        changes["images"] = "image" in fields["input"]
    if "cost" in fields:
        cost = fields["cost"]
        changes["cost"] = ModelCost(
            input=float(cost.get("input", info.cost.input)),
            output=float(cost.get("output", info.cost.output)),
            cache_read=float(cost.get("cacheRead", info.cost.cache_read)),
            cache_write=float(cost.get("cacheWrite", info.cost.cache_write)),
        )
    compat = fields.get("compat")
    if isinstance(compat, dict):
        changes["compat"] = {**info.compat, **compat}
        if isinstance(compat.get("supportsMidConvoSystemMessages"), bool):
            changes["system_messages_mid_conversation"] = compat["supportsMidConvoSystemMessages"]
    limits = fields.get("inputLimits")
    if isinstance(limits, dict):
        changes["input_limits"] = limits
    levels = fields.get("thinkingLevelMap")
    if isinstance(levels, dict):
        changes["thinking_level_map"] = {
            str(k): v for k, v in levels.items() if v is None or isinstance(v, str)
        }
    return dataclasses.replace(info, **changes) if changes else info


def _known(pid: str) -> bool:
    """A built-in provider of pi's table that speaks an API pictx supports."""
    spec = provider_spec(pid)
    return spec is not None and bool(spec.supported_apis)


def _default_api(pid: str) -> str:
    spec = provider_spec(pid)
    if spec is not None and spec.supported_apis:
        return spec.supported_apis[0]
    return "openai-completions"


def _provider_template(spec: ProviderSpec) -> ModelInfo:
    """What a model id named on a provider without a catalog here starts from."""
    api = spec.supported_apis[0]
    return ModelInfo(
        provider=spec.id,
        id=spec.id,
        api=api,
        base_url=spec.base_url_for(api),
        context_window=128_000,
        max_tokens=16_384,
        system_messages_mid_conversation=api in ("openai-completions", "openai-responses"),
    )


def _custom_info(pid: str, provider: Mapping[str, Any], model: Mapping[str, Any]) -> ModelInfo:
    api = model.get("api") or provider.get("api") or _default_api(pid)
    spec = provider_spec(pid)
    base = ModelInfo(
        provider=pid,
        id=model["id"],
        api=api,
        name=model["id"],
        base_url=model.get("baseUrl")
        or provider.get("baseUrl")
        or (spec.base_url_for(api) if spec is not None else None),
        context_window=128_000,
        max_tokens=16_384,
        system_messages_mid_conversation=pid == "openai",
    )
    fields = dict(model)
    compat = provider.get("compat")
    if isinstance(compat, dict) and "compat" not in fields:
        fields["compat"] = compat
    return _apply_model_fields(base, fields)


def entries_from(providers: Mapping[str, Any]) -> list[ModelEntry]:
    entries = [ModelEntry(info) for info in BUILTIN_MODELS]
    for pid, provider in providers.items():
        key = provider.get("apiKey")
        headers = dict(provider.get("headers") or {})
        auth = bool(provider.get("authHeader", False))
        if _known(pid):
            rerouted: list[ModelEntry] = []
            for entry in entries:
                if entry.info.provider != pid:
                    rerouted.append(entry)
                    continue
                info = entry.info
                if provider.get("baseUrl"):
                    info = dataclasses.replace(info, base_url=provider["baseUrl"])
                if isinstance(provider.get("compat"), dict):
                    info = _apply_model_fields(info, {"compat": provider["compat"]})
                rerouted.append(ModelEntry(info, key, headers, auth))
            entries = rerouted
        for model in provider.get("models", []):
            info = _custom_info(pid, provider, model)
            model_headers = {**headers, **(model.get("headers") or {})}
            new = ModelEntry(info, key, model_headers, auth)
            entries = [e for e in entries if e.key != new.key] + [new]
        for mid, override in (provider.get("modelOverrides") or {}).items():
            entries = [
                dataclasses.replace(e, info=_apply_model_fields(e.info, override))
                if e.info.provider == pid and e.info.id == mid
                else e
                for e in entries
            ]
    return entries


def templates_from(providers: Mapping[str, Any]) -> dict[str, ModelEntry]:
    """A starting entry per known provider (models.json provider settings applied)."""
    templates: dict[str, ModelEntry] = {}
    for spec in BUILTIN_PROVIDERS:
        if not spec.supported_apis:
            continue
        info = _provider_template(spec)
        provider = providers.get(spec.id) or {}
        if provider.get("api") in SUPPORTED_APIS:
            info = dataclasses.replace(
                info, api=provider["api"], base_url=spec.base_url_for(provider["api"])
            )
        if provider.get("baseUrl"):
            info = dataclasses.replace(info, base_url=provider["baseUrl"])
        templates[spec.id] = ModelEntry(
            info,
            provider.get("apiKey"),
            dict(provider.get("headers") or {}),
            bool(provider.get("authHeader", False)),
        )
    return templates


def missing_windows(providers: Mapping[str, Any]) -> list[str]:
    """A note per custom model without ``contextWindow`` (it silently gets 128k otherwise)."""
    notes = []
    for pid, provider in providers.items():
        for model in provider.get("models", []):
            if "contextWindow" not in model:
                notes.append(
                    f'{pid}/{model["id"]} has no "contextWindow"; assuming 128000 tokens '
                    "(set the server's real window, or compaction comes too late)"
                )
    return notes
