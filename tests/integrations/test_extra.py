"""Importing an adapter without its framework names the extra that installs it."""

from __future__ import annotations

import importlib
import sys

import pytest

CASES = [
    ("pi_context.integrations.openai_agents", "agents", "openai-agents"),
    ("pi_context.integrations.pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ("pi_context.integrations.langchain", "langchain", "langchain"),
]


@pytest.mark.parametrize(("adapter", "framework", "extra"), CASES)
def test_a_missing_framework_names_its_extra(
    adapter: str, framework: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(sys.modules):
        if name == adapter or name.startswith(adapter + "."):
            monkeypatch.delitem(sys.modules, name)
        if name == framework or name.startswith(framework + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, framework, None)  # as if it were not installed
    with pytest.raises(ImportError, match=rf"pip install 'pi-context\[{extra}\]'"):
        importlib.import_module(adapter)


def test_the_core_needs_no_framework() -> None:
    import pi_context.integrations as core

    assert {"ContextEngine", "repair_pairs"} <= set(core.__all__)
