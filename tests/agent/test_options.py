"""AgentSession's options are checked at the call: a typo or a wrong type fails there, naming
the option, instead of being ignored (the transcript lost, the prompt dropped) or failing on
the first run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.agent.session import AgentSession
from pi_context.errors import ModelNotFoundError, ProviderError, SessionError
from pi_context.providers import OpenAIChatModel
from pi_context.testing import ScriptedModel, reply


def _base(project_dir: Path) -> dict[str, Any]:
    return {"cwd": project_dir, "agent_dir": project_dir.parent / "agent", "trusted": True}


async def test_a_misspelt_keyword_of_create_names_itself_and_the_closest_option(
    project_dir: Path,
) -> None:
    with pytest.raises(TypeError, match=r"'sesion_file'; did you mean 'session_file'\?"):
        AgentSession.create(**_base(project_dir), sesion_file=project_dir / "s.jsonl")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"'system_promt'; did you mean 'system_prompt'\?"):
        AgentSession.create(**_base(project_dir), system_promt="Be brief.")  # type: ignore[call-arg]
    assert not (project_dir / "s.jsonl").exists()


async def test_open_and_adopt_check_their_keywords_too(project_dir: Path) -> None:
    path = project_dir / "s.jsonl"
    sess = await AgentSession.create(**_base(project_dir), session_file=path)
    sess.session.append_message({"role": "user", "content": "hi", "timestamp": 1})
    await sess.aclose()
    with pytest.raises(TypeError, match=r"'trustd'; did you mean 'trusted'\?"):
        AgentSession.open(path, trustd=True)  # type: ignore[call-arg]
    with pytest.raises(
        TypeError, match=r"AgentSession.open\(\) got an unexpected keyword argument 'session_file'"
    ):
        AgentSession.open(path, session_file=path)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("model", 42, "model must be a Model"),
        ("append_system_prompt", "one text", "append_system_prompt must be a sequence of texts"),
        ("tools", ["read"], "tools must be a sequence of pi_context.Tool"),
        ("settings", ["compaction"], "settings must be a mapping"),
        ("trusted", "yes", "trusted must be True, False or None"),
        ("start_reason", "boot", "start_reason must be 'startup'"),
    ],
)
async def test_a_value_of_the_wrong_type_fails_at_the_call(
    project_dir: Path, option: str, value: Any, message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        AgentSession.create(**{**_base(project_dir), option: value})


async def test_a_model_text_resolves_through_the_registry(project_dir: Path) -> None:
    agent_dir = project_dir.parent / "agent"
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "lab": {
                        "baseUrl": "http://127.0.0.1:9/v1",
                        "api": "openai-completions",
                        "models": [{"id": "tiny", "contextWindow": 8192}],
                    }
                }
            }
        )
    )
    sess = await AgentSession.create(**_base(project_dir), model="lab/tiny")
    assert isinstance(sess.model, OpenAIChatModel)
    assert (sess.model.info.provider, sess.model.info.id) == ("lab", "tiny")
    assert sess.model.info.context_window == 8192


async def test_a_model_text_without_its_key_or_unknown_fails_at_create(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        AgentSession.create(**_base(project_dir), model="openai/gpt-4o")
    with pytest.raises(ModelNotFoundError, match="not found"):
        AgentSession.create(**_base(project_dir), model="no-such-model-anywhere")


async def test_create_is_an_async_context_manager_that_closes_the_session(
    project_dir: Path,
) -> None:
    path = project_dir / "s.jsonl"
    async with AgentSession.create(
        **_base(project_dir), session_file=path, model=ScriptedModel([reply("hi")])
    ) as sess:
        await sess.run("hello")
    with pytest.raises(SessionError, match="closed"):
        sess.session.append_label(sess.session.entries[0].id, "late")
    async with await AgentSession.open(path) as again:
        assert len(again.session.entries) == len(sess.session.entries)
    with pytest.raises(SessionError, match="closed"):
        again.session.append_label(again.session.entries[0].id, "late")


def test_reload_is_a_coroutine_and_says_so() -> None:
    import inspect

    assert inspect.iscoroutinefunction(AgentSession.reload)
    assert "await sess.reload()" in (AgentSession.reload.__doc__ or "")


async def test_a_prompt_without_the_models_key_fails_before_anything_is_stored(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as in pi: the prompt is refused, so no session file is left behind for it
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    from pi_context.providers import resolve_model

    model = resolve_model("openai/gpt-4o")  # lazy: the key is missing, found at the prompt
    path = project_dir / "s.jsonl"
    sess = await AgentSession.create(**_base(project_dir), model=model, session_file=path)
    with pytest.raises(
        ProviderError, match='No API key found for provider "openai": set OPENAI_API_KEY'
    ):
        await sess.run("hi")
    await sess.aclose()
    assert not path.exists()
    assert [e.type for e in sess.session.entries if e.type == "message"] == []


def test_create_still_works_where_a_coroutine_is_expected(project_dir: Path) -> None:
    import asyncio

    sess = asyncio.run(AgentSession.create(**_base(project_dir)))
    assert sess.cwd == str(project_dir)

    async def in_a_task() -> AgentSession:
        return await asyncio.create_task(AgentSession.create(**_base(project_dir)))

    assert asyncio.run(in_a_task()).cwd == str(project_dir)
