"""The curated namespace of pi_context.providers: what a library user reaches a real model by."""

from __future__ import annotations

import subprocess
import sys

import pi_context.providers

PUBLIC = [
    "AnthropicModel",
    "Credentials",
    "GoogleModel",
    "LocalModel",
    "ModelEntry",
    "ModelRegistry",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "Resolution",
    "default_model",
    "list_models",
    "load_registry",
    "parse_models_json",
    "resolve_model",
]


def test_the_public_names_are_pinned_and_sorted() -> None:
    assert pi_context.providers.__all__ == PUBLIC
    assert sorted(PUBLIC) == PUBLIC


def test_every_public_name_exists_and_has_its_own_docstring() -> None:
    undocumented = []
    for name in PUBLIC:
        obj = getattr(pi_context.providers, name)
        doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else obj.__doc__
        if not doc or not doc.strip() or doc.startswith(f"{name}("):
            undocumented.append(name)
    assert undocumented == []


def test_importing_the_package_loads_no_provider_sdk() -> None:
    code = (
        "import sys, pi_context.providers as p\n"
        "p.resolve_model\n"
        "heavy = ('openai', 'anthropic', 'google', 'llama_cpp', 'httpx2')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert (done.stdout, done.stderr) == ("[]\n", "")
