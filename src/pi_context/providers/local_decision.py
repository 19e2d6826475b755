"""The embedded model decides: answer in text, or call which tool.

Asked to answer and to pick a tool in one reply, a 135M model mostly copies: the example call
of its system prompt, a tool whose name appears in the request, the path of the example.
Asked one narrow question instead (which of a few labels fits this request, after a dozen
worked examples) it sorts requests well (``benchmarks/bench_local_decisions.py``). So before
it replies to a user message, the model reads a short fixed prompt of labelled examples that
ends with the request, and its next-token log-probabilities over the labels (``answer``,
``read``, ``bash``, ``write``) choose. The decision is the model's; no keyword rule forces a
call. A call is then written by the same model under a grammar for the chosen tool.

The decision prompt is fixed but for the request at its end, and it runs on a llama.cpp
context of its own (:data:`DECISION_CONTEXT` tokens), so its examples stay evaluated between
requests and the conversation's evaluated prefix in the main context is not disturbed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pi_context.messages import ToolDeclaration

__all__ = [
    "ANSWER",
    "DECISION_CONTEXT",
    "EXAMPLES",
    "choose",
    "decision_labels",
    "decision_prompt",
]

ANSWER = "answer"
"""The label for a reply in plain text."""

DECISION_CONTEXT = 1024
"""Tokens of the decision prompt's own context (the examples take about 330)."""

_REQUEST_CHARS = 1200
"""The end of a longer request is what is shown (piped input comes before the ask)."""

_INSTRUCTION = (
    "You sort requests to a coding assistant. Reply with one word: answer if it can be "
    "answered from knowledge alone, read to look at a named file, bash to run a shell "
    "command, write to create a file."
)

EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Write a poem about autumn leaves.", ANSWER),
    ("Show me what is in setup.py", "read"),
    ("Run the unit tests.", "bash"),
    ("What is a closure in JavaScript?", ANSWER),
    ("Create a file ideas.md listing two ideas.", "write"),
    ("Which files are in the docs folder?", "bash"),
    ("Tell me about the history of Rome.", ANSWER),
    ("Look at package.json and tell me the version.", "read"),
    ("Install the requests package with pip.", "bash"),
    ("Can you suggest a name for my cat?", ANSWER),
    ("Save the words hello world in greeting.txt", "write"),
)
"""Worked examples of the decision prompt (none is a prompt of the benchmark)."""

_TOOL_LABELS = ("read", "bash", "write")
_FILE_LABELS = ("read", "write")


def decision_labels(tools: Sequence[ToolDeclaration], *, names_a_file: bool = True) -> list[str]:
    """``answer`` and the declared tools the decision prompt knows, in a fixed order.

    ``read`` and ``write`` are offered only when the request names a file: a 135M model
    cannot find a path on its own, and a file written under an invented name is harm done
    (the issue's essay became a file named after a date).
    """
    declared = {tool["name"] for tool in tools}
    return [
        ANSWER,
        *(
            label
            for label in _TOOL_LABELS
            if label in declared and (names_a_file or label not in _FILE_LABELS)
        ),
    ]


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def decision_prompt(request: str, labels: Sequence[str]) -> str:
    """The ChatML prompt whose next token decides the reply to ``request``."""
    out = [_turn("system", _INSTRUCTION)]
    for example, label in EXAMPLES:
        if label in labels:
            out += [_turn("user", example), _turn("assistant", label)]
    text = " ".join(request.split())
    if len(text) > _REQUEST_CHARS:
        text = "..." + text[-_REQUEST_CHARS:]
    out += [_turn("user", text), "<|im_start|>assistant\n"]
    return "".join(out)


def choose(logprobs: Mapping[str, float], *, required: bool = False) -> str:
    """The most likely label; with ``required`` the most likely tool (never ``answer``)."""
    candidates = {k: v for k, v in logprobs.items() if not (required and k == ANSWER)}
    if not candidates:
        raise ValueError("no label to choose from")
    return max(candidates, key=lambda label: (candidates[label], -list(logprobs).index(label)))
