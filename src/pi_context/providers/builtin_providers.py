"""pi's built-in providers (pi-ai 1.6.0): id, API kinds, key variables, default base URLs.

The table is pi's, row for row. pictx speaks four of pi's chat APIs
(:data:`SUPPORTED_APIS`); a provider that speaks one of them is *known*: ``--model
provider/some-id`` resolves on it (as a custom id when the catalog has no such model), its key
comes from its environment variables, and ``pictx models`` lists it. Providers that speak only
other APIs (Bedrock, Mistral, Vertex, Codex, pi's own gateway) are kept in the table so that
naming them gives a clear "not supported" error rather than "unknown provider".

Base URLs may hold ``{VAR}`` placeholders, filled from the environment (Cloudflare's account and
gateway ids); a provider that speaks several APIs has one base URL per API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from msgspec import Struct, field

__all__ = [
    "BUILTIN_PROVIDERS",
    "SUPPORTED_APIS",
    "ProviderSpec",
    "fill_base_url",
    "provider_spec",
]

SUPPORTED_APIS = (
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "google-generative-ai",
)


class ProviderSpec(Struct, frozen=True):
    """One row of pi's provider table."""

    id: str
    apis: tuple[str, ...]
    key_env: tuple[str, ...] = ()
    """Environment variables holding the key, tried in order."""
    base_url: str | None = None
    """The default base URL (``None``: from the environment, e.g. Azure)."""
    api_base_urls: Mapping[str, str] = field(default_factory=dict)
    """Base URL per API where it differs from :attr:`base_url`."""

    @property
    def supported_apis(self) -> tuple[str, ...]:
        """The APIs of this provider that pictx speaks, in the table's order."""
        return tuple(api for api in self.apis if api in SUPPORTED_APIS)

    def base_url_for(self, api: str) -> str | None:
        return self.api_base_urls.get(api, self.base_url)


def _p(
    pid: str,
    apis: str,
    keys: str = "",
    base: str | None = None,
    per_api: Mapping[str, str] | None = None,
) -> ProviderSpec:
    return ProviderSpec(pid, tuple(apis.split()), tuple(keys.split()), base, dict(per_api or {}))


_CF = "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/"
_OPENCODE = "https://opencode.ai/inference/"
_OPENCODE_GO = "https://opencode.ai/inference/go/"
_QWEN = "https://token-plan.maas.qwencloudapi.com/compatible-mode/v1"
_QWEN_CN = "https://token-plan.maas.qianwenaiapi.com/compatible-mode/v1"
_COMPLETIONS_RESPONSES_ANTHROPIC_GOOGLE = (
    "anthropic-messages google-generative-ai openai-completions openai-responses"
)


def _opencode(pid: str, base: str) -> ProviderSpec:
    return _p(
        pid,
        _COMPLETIONS_RESPONSES_ANTHROPIC_GOOGLE,
        "OPENCODE_API_KEY",
        base + "openai/v1",
        {
            "anthropic-messages": base + "anthropic",
            "google-generative-ai": base + "google/v1beta",
        },
    )


BUILTIN_PROVIDERS: tuple[ProviderSpec, ...] = (
    _p(
        "amazon-bedrock",
        "bedrock-converse-stream",
        "AWS_BEARER_TOKEN_BEDROCK",
        "https://bedrock-runtime.us-east-1.amazonaws.com",
    ),
    _p("ant-ling", "openai-completions", "ANT_LING_API_KEY", "https://api.ant-ling.com/v1"),
    _p(
        "anthropic",
        "anthropic-messages",
        "ANTHROPIC_AUTH_TOKEN ANTHROPIC_OAUTH_TOKEN ANTHROPIC_API_KEY",
        "https://api.anthropic.com",
    ),
    _p(
        "azure",
        "azure-openai-responses openai-completions",
        "AZURE_OPENAI_API_KEY",
        "{AZURE_OPENAI_BASE_URL}",
    ),
    _p("baseten", "openai-completions", "BASETEN_API_KEY", "https://inference.baseten.co/v1"),
    _p("cerebras", "openai-completions", "CEREBRAS_API_KEY", "https://api.cerebras.ai/v1"),
    _p(
        "cloudflare-ai-gateway",
        "anthropic-messages openai-completions openai-responses",
        "CLOUDFLARE_API_KEY",
        _CF + "openai",
        {"anthropic-messages": _CF + "anthropic", "openai-completions": _CF + "compat"},
    ),
    _p(
        "cloudflare-workers-ai",
        "openai-completions",
        "CLOUDFLARE_API_KEY",
        "https://api.cloudflare.com/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1",
    ),
    _p("deepseek", "openai-completions", "DEEPSEEK_API_KEY", "https://api.deepseek.com"),
    _p(
        "fireworks",
        "anthropic-messages openai-completions",
        "FIREWORKS_API_KEY",
        "https://api.fireworks.ai/inference",
        {"openai-completions": "https://api.fireworks.ai/inference/v1"},
    ),
    _p(
        "github-copilot",
        "anthropic-messages openai-completions openai-responses",
        "COPILOT_GITHUB_TOKEN",
        "https://api.individual.githubcopilot.com",
    ),
    _p(
        "google",
        "google-generative-ai",
        "GEMINI_API_KEY",
        "https://generativelanguage.googleapis.com/v1beta",
    ),
    _p(
        "google-vertex",
        "google-vertex",
        "GOOGLE_CLOUD_API_KEY",
        "https://{GOOGLE_CLOUD_LOCATION}-aiplatform.googleapis.com",
    ),
    _p("groq", "openai-completions", "GROQ_API_KEY", "https://api.groq.com/openai/v1"),
    _p("huggingface", "openai-completions", "HF_TOKEN", "https://router.huggingface.co/v1"),
    _p("kimi-coding", "openai-completions", "KIMI_API_KEY", "https://api.kimi.com/coding/v1"),
    _p("meta", "openai-responses", "META_API_KEY", "https://api.meta.ai/v1"),
    _p("minimax", "anthropic-messages", "MINIMAX_API_KEY", "https://api.minimax.io/anthropic"),
    _p(
        "minimax-cn",
        "anthropic-messages",
        "MINIMAX_CN_API_KEY",
        "https://api.minimaxi.com/anthropic",
    ),
    _p("mistral", "mistral-conversations", "MISTRAL_API_KEY", "https://api.mistral.ai"),
    _p("moonshotai", "openai-completions", "MOONSHOT_API_KEY", "https://api.moonshot.ai/v1"),
    _p("moonshotai-cn", "openai-completions", "MOONSHOT_API_KEY", "https://api.moonshot.cn/v1"),
    _p("nvidia", "openai-completions", "NVIDIA_API_KEY", "https://integrate.api.nvidia.com/v1"),
    _p("openai", "openai-responses", "OPENAI_API_KEY", "https://api.openai.com/v1"),
    _p("openai-codex", "openai-codex-responses", "", "https://chatgpt.com/backend-api"),
    _opencode("opencode", _OPENCODE),
    _opencode("opencode-go", _OPENCODE_GO),
    _p(
        "openrouter",
        "anthropic-messages openai-completions",
        "OPENROUTER_API_KEY",
        "https://openrouter.ai/api/v1",
        {"anthropic-messages": "https://openrouter.ai/api"},
    ),
    _p(
        "qwen-token-plan",
        "openai-completions",
        "QWEN_TOKEN_PLAN_TEAM_API_KEY QWEN_TOKEN_PLAN_API_KEY",
        _QWEN,
    ),
    _p(
        "qwen-token-plan-cn",
        "openai-completions",
        "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY QWEN_TOKEN_PLAN_CN_API_KEY",
        _QWEN_CN,
    ),
    _p(
        "qwen-token-plan-individual",
        "openai-completions",
        "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY QWEN_TOKEN_PLAN_API_KEY",
        _QWEN,
    ),
    _p(
        "qwen-token-plan-individual-cn",
        "openai-completions",
        "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY QWEN_TOKEN_PLAN_CN_API_KEY",
        _QWEN_CN,
    ),
    _p("radius", "pi-messages", "RADIUS_API_KEY", "https://radius.pi.dev/v1"),
    _p("together", "openai-completions", "TOGETHER_API_KEY", "https://api.together.ai/v1"),
    _p("typesafe", "typesafe-system-one", "TYPESAFE_API_KEY"),
    _p(
        "vercel-ai-gateway",
        "anthropic-messages",
        "AI_GATEWAY_API_KEY",
        "https://ai-gateway.vercel.sh",
    ),
    _p("xai", "openai-responses", "XAI_API_KEY", "https://api.x.ai/v1"),
    _p("xiaomi", "openai-completions", "XIAOMI_API_KEY", "https://api.xiaomimimo.com/v1"),
    _p(
        "xiaomi-token-plan-ams",
        "openai-completions",
        "XIAOMI_TOKEN_PLAN_AMS_API_KEY",
        "https://token-plan-ams.xiaomimimo.com/v1",
    ),
    _p(
        "xiaomi-token-plan-cn",
        "openai-completions",
        "XIAOMI_TOKEN_PLAN_CN_API_KEY",
        "https://token-plan-cn.xiaomimimo.com/v1",
    ),
    _p(
        "xiaomi-token-plan-sgp",
        "openai-completions",
        "XIAOMI_TOKEN_PLAN_SGP_API_KEY",
        "https://token-plan-sgp.xiaomimimo.com/v1",
    ),
    _p("zai", "openai-completions", "ZAI_API_KEY", "https://api.z.ai/api/coding/paas/v4"),
    _p(
        "zai-coding-cn",
        "openai-completions",
        "ZAI_CODING_CN_API_KEY",
        "https://open.bigmodel.cn/api/coding/paas/v4",
    ),
)

_BY_ID = {spec.id: spec for spec in BUILTIN_PROVIDERS}
_PLACEHOLDER = re.compile(r"\{([A-Z_][A-Z0-9_]*)\}")


def provider_spec(provider: str) -> ProviderSpec | None:
    """pi's row for ``provider`` (exact id), if it is built in."""
    return _BY_ID.get(provider)


def fill_base_url(url: str, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """``(url, missing)``: ``{VAR}`` placeholders filled from ``env``; ``missing`` names one unset."""
    missing: list[str] = []

    def sub(match: re.Match[str]) -> str:
        value = env.get(match.group(1), "")
        if not value:
            missing.append(match.group(1))
        return value

    filled = _PLACEHOLDER.sub(sub, url)
    return (None, missing[0]) if missing else (filled, None)
