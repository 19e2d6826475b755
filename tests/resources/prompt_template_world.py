"""The prompt-template scenario run by both pi 1.6.0 (:mod:`.record_pi_templates`, by hand)
and pictx (:mod:`.test_prompt_templates_pi`): an agent dir and a trusted project with
templates in every place pi reads them, and the prompts typed."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["PROMPTS", "build_world"]

PROMPTS = [
    '/rev "API compat" it\'s \'x y\' "q \\"z\\""',
    "/rev",
    '/rev "" b',
    '/rev "unclosed a',
    "/skill:none x",
    "not /rev",
    '/review "API compat" it\'s',
    "/review",
    "/fix one two",
    "/nested a  b",
    "/review\tTAB",
    "/helper x",
    "/SKILL y",
]
"""What the user types; each is sent as one ``-p`` prompt."""

REV = """---
description: r
argument-hint: "[focus]"
---

U1=$1 U2=$2 all=$@ d=${3:-dflt} s=${@:2} sl=${@:1:2} A=${ARGUMENTS:-none} z=$0 ${@:0}

"""


def build_world(root: Path, base_url: str = "http://127.0.0.1:9/v1") -> tuple[Path, Path]:
    """``(agent dir, project)`` under ``root``: ``rev``/``review``/``fix`` in the agent's
    ``prompts/``, ``fix`` in the project's ``.pi/prompts/``, ``review`` and a nested ``nested``
    under the settings entry ``extra`` (so settings beat both folders, the project beats the
    agent dir), and a ``SKILL.md`` with a neighbour deeper there (both templates)."""
    agent, project = root / "agent", root / "project"
    folders = (agent / "prompts", agent / "extra" / "deep" / "kit", project / ".pi" / "prompts")
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    model = {
        "id": "m",
        "name": "m",
        "reasoning": False,
        "input": ["text"],
        "contextWindow": 100000,
        "maxTokens": 1000,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }
    provider = {"baseUrl": base_url, "api": "openai-completions", "apiKey": "k", "models": [model]}
    (agent / "models.json").write_text(json.dumps({"providers": {"sim": provider}}))
    settings = {
        "defaultProvider": "sim",
        "defaultModel": "m",
        "defaultProjectTrust": "always",
        "prompts": ["extra"],
    }
    (agent / "settings.json").write_text(json.dumps(settings))
    (agent / "prompts" / "rev.md").write_text(REV)
    (agent / "prompts" / "review.md").write_text("agent review $1\n")
    (agent / "prompts" / "fix.md").write_text("user fix $@\n")
    (project / ".pi" / "prompts" / "fix.md").write_text("project fix $1\n")
    (agent / "extra" / "deep" / "nested.md").write_text("nested [$@]\n")
    (agent / "extra" / "review.md").write_text("settings review wins? $1\n")
    (agent / "extra" / "deep" / "kit" / "SKILL.md").write_text("skill file as template $1\n")
    (agent / "extra" / "deep" / "kit" / "helper.md").write_text("helper beside a skill $1\n")
    return agent, project
