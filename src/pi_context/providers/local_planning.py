"""What a reply of the embedded model may be, decided before the model runs.

After a tool result the reply is text: one call per user message, so a run always ends (a 135M
model does not chain tools usefully). ``tool_choice="required"`` or a tool name skips the
``answer`` label; ``none`` is text. Otherwise the decision step
(:mod:`~pi_context.providers.local_decision`) chooses among labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pi_context.messages import ToolDeclaration
from pi_context.providers.delivery import Delivery, SystemUpdate, user_blocks
from pi_context.providers.local_decision import ANSWER, decision_labels
from pi_context.providers.local_grammar import mentioned_files

__all__ = ["ReplyPlan", "after_tool_result", "latest_user_text", "plan_reply"]


def latest_user_text(delivery: Delivery) -> str | None:
    """The text of the latest user message, or ``None`` when a reply or tool result follows it."""
    for item in reversed(delivery.items):
        if isinstance(item, SystemUpdate):
            continue
        if item["role"] != "user":
            return None
        return "".join(b["text"] for b in user_blocks(item["content"]) if b["type"] == "text")
    return None


def after_tool_result(delivery: Delivery) -> bool:
    """True when the last non-system item is a tool result (the model should now answer)."""
    for item in reversed(delivery.items):
        if not isinstance(item, SystemUpdate):
            return bool(item["role"] == "toolResult")
    return False


def _latest_request(delivery: Delivery) -> str:
    """The text of the newest user message, wherever it is."""
    for item in reversed(delivery.items):
        if not isinstance(item, SystemUpdate) and item["role"] == "user":
            return "".join(b["text"] for b in user_blocks(item["content"]) if b["type"] == "text")
    return ""


@dataclass(frozen=True, slots=True)
class ReplyPlan:
    """What a reply may be, before the model decides.

    ``tools`` are those a call may name (none: text only); ``required`` forbids text;
    ``labels`` (when not empty) are the choices of the decision step, for ``request``;
    ``paths`` pin path arguments.
    """

    tools: list[ToolDeclaration] = field(default_factory=list)
    required: bool = False
    labels: list[str] = field(default_factory=list)
    request: str = ""
    paths: list[str] = field(default_factory=list)

    def decided(self, label: str) -> ReplyPlan:
        """The plan once the decision step chose ``label``."""
        if label == ANSWER:
            return ReplyPlan()
        chosen = [t for t in self.tools if t["name"] == label]
        return ReplyPlan(tools=chosen, required=True, paths=self.paths)


def plan_reply(delivery: Delivery, choice: str, *, decide: bool = True) -> ReplyPlan:
    """The :class:`ReplyPlan` for a request with tool choice ``choice``.

    With ``decide``, a reply to a user message is chosen by the decision step among the
    labels of :func:`~pi_context.providers.local_decision.decision_labels`; declared tools it
    does not know (``edit``, extension tools) are reached by naming them in ``choice``.
    """
    tools = list(delivery.tools) if choice != "none" else []
    if not tools or (choice == "auto" and after_tool_result(delivery)):
        return ReplyPlan()  # one call per user message, then an answer: runs always end
    request = _latest_request(delivery)
    paths = mentioned_files(request)
    if choice not in ("auto", "required"):
        named = [t for t in tools if t["name"] == choice]
        return ReplyPlan(tools=named or tools, required=True, paths=paths)
    required = choice == "required"
    if not decide or latest_user_text(delivery) is None:
        return ReplyPlan(tools=tools, required=required, paths=paths)
    labels = decision_labels(tools, names_a_file=bool(paths))
    if required:
        labels = labels[1:]
        if len(labels) < 2:
            chosen = [t for t in tools if t["name"] in labels] or tools
            return ReplyPlan(tools=chosen, required=True, paths=paths)
    elif len(labels) < 2:
        return ReplyPlan()
    return ReplyPlan(tools=tools, required=required, labels=labels, request=request, paths=paths)
