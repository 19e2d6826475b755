"""The curated public namespace: adding or removing a name is a deliberate change here."""

from __future__ import annotations

import subprocess
import sys

import pi_context

PUBLIC = [
    "AgentEnd",
    "AgentEvent",
    "AgentOptions",
    "AgentSession",
    "AgentSettled",
    "AgentStart",
    "AssistantStreamEvent",
    "AutoRetryEnd",
    "AutoRetryStart",
    "CacheUpdate",
    "CompactionEnd",
    "CompactionError",
    "CompactionFallback",
    "CompactionPaused",
    "CompactionSettings",
    "CompactionStart",
    "Compactor",
    "Entry",
    "EntryAppended",
    "ExtensionAPI",
    "ExtensionContext",
    "ExtensionError",
    "ExtensionFailure",
    "ExtensionHooks",
    "FixedClock",
    "FunctionTool",
    "LoadedResources",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "Model",
    "ModelInfo",
    "ModelRequest",
    "ObservationsMasked",
    "PiContextError",
    "Projection",
    "PromptError",
    "ProviderError",
    "QueueUpdate",
    "RequestOptions",
    "ResourceLoader",
    "RetryPolicy",
    "RetrySettings",
    "ScriptedModel",
    "ScriptedReply",
    "SearchHit",
    "SequentialIds",
    "Session",
    "SessionError",
    "SessionFormatError",
    "Settings",
    "SettingsError",
    "StreamDone",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "SystemPromptOptions",
    "Tool",
    "ToolError",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolOutcome",
    "TreeNavigated",
    "TurnEnd",
    "TurnStart",
    "compact",
    "compaction_settings_for",
    "complete",
    "convert_to_llm",
    "default_tools",
    "estimate_tokens",
    "failure",
    "load_extensions",
    "load_settings",
    "prompt_options_for",
    "reply",
    "retry_settings_for",
    "system_prompt_for",
    "text_of",
    "user_message",
]


def test_the_public_names_are_pinned_and_sorted() -> None:
    assert pi_context.__all__ == PUBLIC
    assert sorted(PUBLIC) == PUBLIC


def test_every_public_name_exists_and_has_its_own_docstring() -> None:
    undocumented = []
    for name in PUBLIC:
        obj = getattr(pi_context, name)
        # a class's own docstring, not an inherited one nor a dataclass's generated signature
        doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else obj.__doc__
        if not doc or not doc.strip() or doc.startswith(f"{name}("):
            undocumented.append(name)
    assert undocumented == []


def test_no_other_public_attribute_leaks_from_the_package() -> None:
    # submodules are reachable as attributes once imported; anything else must be listed
    import types

    extra = [
        name
        for name, value in vars(pi_context).items()
        if not name.startswith("_")
        and name not in PUBLIC
        and not isinstance(value, types.ModuleType)
    ]
    assert extra == []


def test_importing_the_package_has_no_side_effects() -> None:
    code = (
        "import sys, pi_context\n"
        "heavy = ('openai', 'anthropic', 'google', 'llama_cpp', 'httpx', 'httpx2', 'prompt_toolkit', 'click')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout == "[]\n"
    assert done.stderr == ""


def test_every_value_class_has_a_signature() -> None:
    """``help()`` and ``inspect.signature`` work on every Struct of the package: a Struct's
    signature resolves its field types, so none may be imported for type checking only."""
    import importlib
    import inspect
    import pkgutil

    import msgspec

    unresolved = []
    for info in pkgutil.walk_packages(pi_context.__path__, "pi_context."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, msgspec.Struct)
                and value.__module__ == info.name
            ):
                try:
                    inspect.signature(value)
                except NameError as error:
                    unresolved.append(f"{info.name}.{value.__qualname__}: {error}")
    assert unresolved == []
