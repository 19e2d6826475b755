"""The embedded local model without running it: prompt, decision, grammar, markup, streaming.

Runs of the real model are in ``test_local_model.py``; here a scripted stand-in for llama.cpp
(:class:`FakeLlama`) drives :class:`LocalModel` end to end.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from pi_context.messages import (
    AssistantMessage,
    Message,
    ToolDeclaration,
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.model import (
    ModelRequest,
    RequestOptions,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCallStart,
)
from pi_context.providers import local
from pi_context.providers.delivery import Delivery, plan_delivery
from pi_context.providers.local import LocalModel
from pi_context.providers.local_decision import (
    ANSWER,
    EXAMPLES,
    choose,
    decision_labels,
    decision_prompt,
)
from pi_context.providers.local_grammar import mentioned_files, parse_tool_calls, tool_grammar
from pi_context.providers.local_planning import ReplyPlan, after_tool_result, plan_reply
from pi_context.providers.local_prompt import (
    held_back,
    markup_start,
    render_chatml,
    tool_instructions,
)
from tests.providers.local_data import BASH, READ, SYSTEM, WRITE


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> AssistantMessage:
    return assistant_message(
        [tool_call(call_id, name, arguments)],
        api="l",
        provider="l",
        model="l",
        stop_reason="toolUse",
        timestamp=3,
    )


def _plan(*messages: Message, tools: Sequence[Any] = ()) -> Delivery:
    return plan_delivery([SYSTEM, *messages], mode="in_place", tools=list(tools))


# -- prompt ---------------------------------------------------------------------------------


def test_render_chatml_layout() -> None:
    messages: list[Message] = [
        SYSTEM,
        user_message("open a.txt", timestamp=2),
        _call("c1", "read", {"path": "a.txt"}),
        tool_result_message("c1", "read", [text_block("hello")], timestamp=4),
        {"role": "system", "content": "", "sections": {"cwd": "<cwd>\n/q\n</cwd>"}, "timestamp": 5},
    ]
    prompt = render_chatml(plan_delivery(messages, mode="in_place"))
    assert prompt.startswith(
        "<|im_start|>system\nYou are a helpful assistant.\n\n<cwd>\n/tmp/p\n</cwd>\n\n# Tools\n"
    )
    assert "- read (path, limit): Read a file from disk.\n" in prompt
    # no markup for a tiny model to copy: no example call, the earlier call told in words
    assert "<tool_call>" not in prompt
    assert "<|im_start|>assistant\nLet me use the read tool on a.txt.<|im_end|>" in prompt
    # the result comes back in plain words, with the request it serves; no tags to echo
    assert (
        "<|im_start|>user\nThe read tool on a.txt returned:\n\nhello\n\n"
        "Answer with the help of this output. My request was: open a.txt<|im_end|>"
    ) in prompt
    assert "<tool_result" not in prompt
    assert (
        '<|im_start|>system\nUpdated system prompt section "cwd":\n\n<cwd>\n/q\n</cwd><|im_end|>'
        in prompt
    )
    assert prompt.endswith("<|im_start|>assistant\n")


def test_failed_tool_results_say_so() -> None:
    messages: list[Message] = [
        SYSTEM,
        user_message("run frobnicate", timestamp=2),
        _call("c1", "bash", {"command": "frobnicate"}),
        tool_result_message(
            "c1", "bash", [text_block("frobnicate: not found\nexit 127")], is_error=True
        ),
    ]
    prompt = render_chatml(plan_delivery(messages, mode="in_place"))
    assert "The bash tool `frobnicate` failed:\n\nfrobnicate: not found\nexit 127\n\n" in prompt
    assert "It did not work." in prompt


def test_long_tool_results_keep_head_and_tail() -> None:
    body = "A" * 5000 + "B" * 5000
    messages: list[Message] = [
        SYSTEM,
        user_message("x" * 500, timestamp=2),
        _call("c1", "read", {"path": "big.txt"}),
        tool_result_message("c1", "read", [text_block(body)], timestamp=4),
    ]
    prompt = render_chatml(plan_delivery(messages, mode="in_place"))
    assert "[... 4000 characters left out ...]" in prompt
    assert "AAAB" not in prompt
    assert "My request was" not in prompt  # too long to repeat


def test_prompts_of_a_growing_conversation_extend_each_other() -> None:
    first: list[Message] = [SYSTEM, user_message("hi", timestamp=2)]
    second = [
        *first,
        assistant_message([text_block("Hello!")], api="l", provider="l", model="l", timestamp=3),
        user_message("bye", timestamp=4),
    ]
    a = render_chatml(plan_delivery(first, mode="in_place"))
    b = render_chatml(plan_delivery(second, mode="in_place"))
    # everything but the open assistant turn is reused
    assert b.startswith(a[: -len("<|im_start|>assistant\n")])


def test_tool_instructions_list_every_tool() -> None:
    text = tool_instructions([READ, BASH])
    assert "- read (path, limit): Read a file from disk." in text
    assert "- bash (command, timeout): Run a shell command." in text
    assert "src/app.py" not in text


# -- markup ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("plain answer", -1),
        ("a < b and c > d", -1),
        ('Done. <tool_result name="bash">', 6),
        ("ok</tool_result>", 2),
        ("Sure.<|im_start|>user", 5),
        ("x <tool_call>{}", 2),
        ("<tool_response>", 0),
    ],
)
def test_markup_start(text: str, where: int) -> None:
    assert markup_start(text) == where


def test_held_back_waits_at_what_may_become_markup() -> None:
    assert held_back("Hello <") == 6
    assert held_back("Hello <tool_re") == 6
    assert held_back("Hello <|im") == 6
    assert held_back("a < b") == 5  # cannot become markup
    assert held_back("see <b>bold</b>") == len("see <b>bold</b>")


# -- grammar and parsing ----------------------------------------------------------------------


def test_parse_tool_calls() -> None:
    text, calls = parse_tool_calls(
        '<tool_call>{"name": "read", "arguments": {"path": "x"}}</tool_call>'
    )
    assert text == ""
    assert calls == [("read", '{"path":"x"}', "")]
    text, calls = parse_tool_calls('Sure. <tool_call>{"name": "read"')
    assert text == "Sure."
    assert calls[0][0] == "invalid"
    assert "not valid JSON" in calls[0][2]
    assert parse_tool_calls("plain answer") == ("plain answer", [])


def test_grammar_names_every_tool_and_required_mode() -> None:
    grammar = tool_grammar([READ, {"name": "bash", "description": "d", "parameters": {}}])
    assert grammar.startswith("root ::= call | text\n")
    assert '"\\"read\\""' in grammar
    assert '"\\"bash\\""' in grammar
    assert '"\\"path\\"" ws ":" ws filled' in grammar
    assert tool_grammar([READ], required=True).startswith("root ::= call\n")


def test_grammar_pins_paths_to_mentioned_files() -> None:
    grammar = tool_grammar([READ], required=True, paths=["notes.txt", "a b.md"])
    assert '"\\"path\\"" ws ":" ws ( "\\"notes.txt\\"" | "\\"a b.md\\"" )' in grammar


def test_mentioned_files() -> None:
    assert mentioned_files("see notes.txt and src/app.py, not v1.2 or me@x.com; notes.txt") == [
        "notes.txt",
        "src/app.py",
    ]
    assert mentioned_files("Write a haiku about the sea.") == []


# -- the decision -----------------------------------------------------------------------------


def test_decision_prompt_ends_with_the_request() -> None:
    edit: ToolDeclaration = {"name": "edit", "description": "e", "parameters": {}}
    labels = decision_labels([READ, BASH, WRITE, edit])
    assert labels == [ANSWER, "read", "bash", "write"]
    prompt = decision_prompt("  Write a haiku\nabout the sea. ", labels)
    assert prompt.endswith(
        "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n"
    )
    assert prompt.count("<|im_start|>assistant\n") == len(EXAMPLES) + 1
    # examples whose tool is not declared are left out
    only_read = decision_prompt("hi", [ANSWER, "read"])
    assert "<|im_start|>assistant\nbash<|im_end|>" not in only_read
    assert "<|im_start|>assistant\nread<|im_end|>" in only_read
    long = decision_prompt("y" * 5000, labels)
    assert "..." + "y" * 1200 + "<|im_end|>" in long
    assert "y" * 1201 not in long


def test_choose() -> None:
    scores = {ANSWER: -0.5, "read": -1.0, "bash": -3.0}
    assert choose(scores) == ANSWER
    assert choose(scores, required=True) == "read"
    assert choose({ANSWER: -1.0, "read": -1.0}) == ANSWER  # ties go to the first label
    with pytest.raises(ValueError, match="no label"):
        choose({ANSWER: 0.0}, required=True)


def test_plan_reply() -> None:
    tools = [READ, BASH, WRITE]
    asked = _plan(user_message("What is in notes.txt?", timestamp=2), tools=tools)
    plan = plan_reply(asked, "auto")
    assert plan.labels == [ANSWER, "read", "bash", "write"]
    assert plan.request == "What is in notes.txt?"
    assert plan.paths == ["notes.txt"]
    assert not plan.required
    # a decision picks text, or one tool with a call required
    assert plan.decided(ANSWER) == ReplyPlan()
    chosen = plan.decided("read")
    assert [t["name"] for t in chosen.tools] == ["read"]
    assert chosen.required
    assert chosen.paths == ["notes.txt"]
    # after a tool result: text, one call per user message
    answered = _plan(
        user_message("read a.txt", timestamp=2),
        _call("c1", "read", {"path": "a.txt"}),
        tool_result_message("c1", "read", [text_block("x")], timestamp=4),
        tools=tools,
    )
    assert after_tool_result(answered)
    assert plan_reply(answered, "auto") == ReplyPlan()
    assert plan_reply(asked, "none") == ReplyPlan()
    named = plan_reply(asked, "bash")
    assert ([t["name"] for t in named.tools], named.required, named.labels) == (["bash"], True, [])
    required = plan_reply(asked, "required")
    assert required.labels == ["read", "bash", "write"]
    assert required.required
    # without the decision step, one grammar admits a call or text
    free = plan_reply(asked, "auto", decide=False)
    assert (len(free.tools), free.required, free.labels) == (3, False, [])
    # tools the decision prompt does not know are reached by name only
    other: ToolDeclaration = {"name": "grep", "description": "g", "parameters": {}}
    only_other = _plan(user_message("x", timestamp=2), tools=[other])
    assert plan_reply(only_other, "auto") == ReplyPlan()
    assert plan_reply(only_other, "grep").tools == [other]
    # a file tool needs a file the user named: no label for read and write without one
    haiku = _plan(user_message("Write a haiku about the sea.", timestamp=2), tools=tools)
    assert plan_reply(haiku, "auto").labels == [ANSWER, "bash"]
    assert plan_reply(haiku, "auto").paths == []
    forced = plan_reply(haiku, "required")
    assert ([t["name"] for t in forced.tools], forced.required, forced.labels) == (
        ["bash"],
        True,
        [],
    )


# -- the whole reply, on a scripted stand-in for llama.cpp --------------------------------------


class FakeLlama:
    """Characters as tokens (id = code point + 10); ``<|im_end|>`` (id 2) ends a turn.

    ``generate`` streams the next scripted reply; with a ``logits_processor`` (the decision
    step) it hands over scores that favour ``label`` and streams nothing useful.
    """

    END = 2

    def __init__(self, replies: Sequence[str], label: str = ANSWER) -> None:
        self.replies = list(replies)
        self.label = label
        self.prompts: list[str] = []
        self.grammars: list[Any] = []
        self._input_ids: list[int] = []
        self.n_tokens = 0

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        if text == b"<|im_end|>":
            return [self.END]
        return [ord(c) + 10 for c in text.decode("utf-8")]

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return "".join(chr(t - 10) for t in tokens).encode("utf-8")

    def token_eos(self) -> int:
        return self.END

    def generate(self, tokens: Sequence[int], **options: Any) -> Iterator[int]:
        self.prompts.append(self.detokenize(tokens).decode("utf-8"))
        processors = options.get("logits_processor")
        if processors:
            numpy = pytest.importorskip("numpy")
            scores = numpy.zeros(200)
            scores[ord(self.label[0]) + 10] = 5.0
            for processor in processors:
                processor(list(tokens), scores)
            yield ord(self.label[0]) + 10
            return
        self.grammars.append(options.get("grammar"))
        self._input_ids, self.n_tokens = list(tokens), len(tokens)
        for char in self.replies.pop(0):
            yield ord(char) + 10
        yield self.END


def _fake_model(
    monkeypatch: pytest.MonkeyPatch, replies: Sequence[str], label: str = ANSWER
) -> tuple[LocalModel, FakeLlama]:
    fake = FakeLlama(replies, label)
    lock = threading.Lock()
    monkeypatch.setattr(local, "load_model", lambda path, n_ctx, n_threads: (fake, lock))
    monkeypatch.setattr(
        importlib,
        "import_module",
        lambda name: _GrammarModule() if name == "llama_cpp.llama_grammar" else _import(name),
    )
    return LocalModel(model_path="/nonexistent/model.gguf"), fake


_import = importlib.import_module


class _GrammarModule:
    class LlamaGrammar:
        @staticmethod
        def from_string(text: str, verbose: bool = False) -> str:
            return text


async def _stream(model: LocalModel, *messages: Message) -> tuple[StreamDone, list[StreamEvent]]:
    request = ModelRequest(
        messages=[SYSTEM, *messages], tools=[READ, BASH, WRITE], options=RequestOptions()
    )
    events = [event async for event in model.stream(request)]
    done = events[-1]
    assert isinstance(done, StreamDone)
    return done, events


async def test_an_answer_stops_at_invented_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    model, fake = _fake_model(
        monkeypatch, ['Waves fold on the shore <tool_result name="bash">\nok</tool_result>']
    )
    done, events = await _stream(model, user_message("Write a haiku about the sea.", timestamp=2))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Waves fold on the shore"
    assert done.message["content"] == [{"type": "text", "text": "Waves fold on the shore"}]
    assert done.message["stopReason"] == "stop"
    assert model.last_decision is not None
    assert max(model.last_decision, key=lambda k: model.last_decision[k]) == ANSWER  # type: ignore[index]
    assert fake.grammars == [None]  # free text, no grammar
    assert fake.prompts[0].endswith(
        "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n"
    )
    assert "You sort requests" in fake.prompts[0]  # the decision prompt came first


async def test_a_decided_call_is_written_under_that_tools_grammar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("numpy")
    # the model writes only the arguments: the head of the call is written for it
    model, fake = _fake_model(monkeypatch, ['{"path": "notes.txt"}}</tool_call>'], label="read")
    done, events = await _stream(model, user_message("What is in notes.txt?", timestamp=2))
    assert not [e for e in events if isinstance(e, TextDelta)]
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.name for s in starts] == ["read"]
    block = done.message["content"][0]
    assert block["type"] == "toolCall"
    assert block["arguments"] == {"path": "notes.txt"}
    assert done.message["stopReason"] == "toolUse"
    assert fake.prompts[-1].endswith(
        '<|im_start|>assistant\n<tool_call>{"name": "read", "arguments": '
    )
    grammar = fake.grammars[0]
    assert grammar.startswith('root ::= args0 ws "}" "</tool_call>"\n')
    assert '"\\"bash\\""' not in grammar
    assert '( "\\"notes.txt\\"" )' in grammar
    # the head counts as output, as the arguments do
    assert done.message["usage"]["output"] == len(
        '<tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>'
    )


async def test_a_call_ends_when_it_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A closed call is the whole reply: the model's end token is not waited for.

    The call below takes exactly the limit; a model that would write its end token next
    ended at ``length`` on some CPUs before, with the same call.
    """
    pytest.importorskip("numpy")
    call = '<tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>'
    model, _ = _fake_model(monkeypatch, ['{"path": "notes.txt"}}</tool_call>more'], label="read")
    request = ModelRequest(
        messages=[SYSTEM, user_message("What is in notes.txt?", timestamp=2)],
        tools=[READ, BASH, WRITE],
        options=RequestOptions(max_tokens=len(call)),
    )
    events = [event async for event in model.stream(request)]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.message["stopReason"] == "toolUse"
    assert [b["type"] for b in done.message["content"]] == ["toolCall"]
    assert done.message["usage"]["output"] == len(call)


async def test_a_call_cut_by_the_limit_is_reported_not_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A limit inside the call's head: ``length``, and the call names the error."""
    pytest.importorskip("numpy")
    model, fake = _fake_model(monkeypatch, ['{"path": "notes.txt"}}</tool_call>'], label="read")
    request = ModelRequest(
        messages=[SYSTEM, user_message("What is in notes.txt?", timestamp=2)],
        tools=[READ, BASH, WRITE],
        options=RequestOptions(max_tokens=5),
    )
    events = [event async for event in model.stream(request)]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.message["stopReason"] == "length"
    assert done.message["usage"]["output"] == 5
    [block] = done.message["content"]
    assert block["type"] == "toolCall"
    assert (block["name"], block["arguments"]) == ("invalid", {})
    assert "ended before its tool call began" in str(block.get("argumentsError"))
    assert fake.replies == ['{"path": "notes.txt"}}</tool_call>']  # nothing was sampled


async def test_after_a_tool_result_the_answer_is_text(monkeypatch: pytest.MonkeyPatch) -> None:
    model, fake = _fake_model(monkeypatch, ["The secret word is banana.<|im_start|>user\nmore"])
    done, _ = await _stream(
        model,
        user_message("Read notes.txt", timestamp=2),
        _call("c1", "read", {"path": "notes.txt"}),
        tool_result_message("c1", "read", [text_block("banana")], timestamp=4),
    )
    assert done.message["content"] == [{"type": "text", "text": "The secret word is banana."}]
    assert len(fake.prompts) == 1  # no decision step after a tool result
    assert fake.grammars == [None]


async def test_text_that_only_looks_like_markup_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    model, _ = _fake_model(monkeypatch, ["Use <b>bold</b> and a < b <"])
    done, events = await _stream(model, user_message("How do I bold text?", timestamp=2))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Use <b>bold</b> and a < b <"
    assert done.message["content"] == [{"type": "text", "text": text}]
