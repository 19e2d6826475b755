"""Steering and follow-up queues: the pure queue state and its two delivery points in the loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pi_context.agent.queues import MessageQueues, is_queue_mode
from pi_context.messages import AgentMessage, text_of, user_message
from pi_context.testing import reply

from .fakes import FakeHost, Recorder, loop_of, scripted


def _texts(messages: list[AgentMessage]) -> list[str]:
    return [text_of(m["content"]) for m in messages]  # type: ignore[typeddict-item]


# -- the queue state ------------------------------------------------------------------------------


def test_one_at_a_time_hands_out_one_message_per_delivery_point() -> None:
    queues = MessageQueues()
    for text in ("a", "b", "c"):
        queues.steer(user_message(text), text)
    assert _texts(queues.drain_steering()) == ["a"]
    assert _texts(queues.drain_steering()) == ["b"]
    assert _texts(queues.drain_steering()) == ["c"]
    assert queues.drain_steering() == []


def test_all_mode_hands_out_everything_and_a_mode_switch_applies_at_once() -> None:
    queues = MessageQueues(follow_up_mode="all")
    for text in ("a", "b", "c"):
        queues.follow_up(user_message(text), text)
    queues.steer(user_message("s1"), "s1")
    queues.steer(user_message("s2"), "s2")
    assert _texts(queues.drain_follow_up()) == ["a", "b", "c"]
    assert _texts(queues.drain_steering()) == ["s1"]
    queues.steering_mode = "all"
    assert _texts(queues.drain_steering()) == ["s2"]
    assert not queues


def test_texts_stay_listed_until_a_user_message_with_that_text_starts() -> None:
    queues = MessageQueues()
    queues.steer(user_message("same"), "same")
    queues.follow_up(user_message("same"), "same")
    queues.follow_up(user_message("later"), "later")
    queues.drain_steering()  # draining does not unlist: delivery (message start) does
    assert queues.texts() == (["same"], ["same", "later"])
    assert queues.pending_count == 3
    assert queues.delivered("same")  # steering first
    assert queues.texts() == ([], ["same", "later"])
    assert queues.delivered("same")
    assert not queues.delivered("unknown")
    assert queues.texts() == ([], ["later"])


def test_extension_messages_are_queued_but_not_listed() -> None:
    queues = MessageQueues()
    queues.steer(user_message("hidden"))
    assert queues.pending_count == 0
    assert queues.has_steering()


def test_clear_returns_the_listed_texts_and_empties_both_queues() -> None:
    queues = MessageQueues()
    queues.steer(user_message("s"), "s")
    queues.follow_up(user_message("f"), "f")
    assert queues.clear() == (["s"], ["f"])
    assert not queues
    assert queues.texts() == ([], [])


def test_queue_modes_are_the_two_pi_knows() -> None:
    assert is_queue_mode("all")
    assert is_queue_mode("one-at-a-time")
    assert not is_queue_mode("ALL")
    assert not is_queue_mode(None)


# -- delivery in the loop -------------------------------------------------------------------------


@dataclass
class QueueHost(FakeHost):
    queues: MessageQueues = field(default_factory=MessageQueues)

    def take_steering(self) -> list[AgentMessage]:
        return self.queues.drain_steering()

    def take_follow_up(self) -> list[AgentMessage]:
        return self.queues.drain_follow_up()


def _user_texts(host: FakeHost) -> list[str]:
    return [text_of(m["content"]) for m in host.stored if m["role"] == "user"]


def _request_roles(host: FakeHost) -> list[list[str]]:
    return [[m["role"] for m in r.messages] for r in host.requests]


async def test_steering_lands_after_the_tool_results_of_the_current_turn() -> None:
    host = QueueHost(scripted(reply(tool_calls=[("steerer", {})]), reply("ok")))

    async def steerer(_: dict[str, Any]) -> str:
        host.queues.steer(user_message("use python"), "use python")
        return "ran"

    host.tools["steerer"] = steerer
    await loop_of(host, Recorder()).run([user_message("go")])
    assert [m["role"] for m in host.stored] == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
    ]
    assert _user_texts(host) == ["go", "use python"]


async def test_steering_without_tool_calls_triggers_another_response() -> None:
    host = QueueHost(scripted(reply("first"), reply("second"), reply("third")))
    host.queues.steer(user_message("one"), "one")
    host.queues.steer(user_message("two"), "two")
    await loop_of(host, Recorder()).run([user_message("go")])
    # one at a time: two queued steering messages cost two more requests
    assert _user_texts(host) == ["go", "one", "two"]
    assert len(host.requests) == 3


async def test_all_mode_delivers_every_steering_message_with_one_request() -> None:
    host = QueueHost(scripted(reply("first"), reply("second")))
    host.queues.steering_mode = "all"
    host.queues.steer(user_message("one"), "one")
    host.queues.steer(user_message("two"), "two")
    await loop_of(host, Recorder()).run([user_message("go")])
    assert _user_texts(host) == ["go", "one", "two"]
    assert len(host.requests) == 2


async def test_follow_ups_wait_until_the_agent_would_stop() -> None:
    host = QueueHost(scripted(reply(tool_calls=[("queuer", {})]), reply("a"), reply("b")))

    async def queuer(_: dict[str, Any]) -> str:
        host.queues.follow_up(user_message("next task"), "next task")
        return "ran"

    host.tools["queuer"] = queuer
    await loop_of(host, Recorder()).run([user_message("go")])
    roles = [m["role"] for m in host.stored]
    # the tool result goes back to the model first; the follow-up only once it stops
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]
    assert _user_texts(host) == ["go", "next task"]


async def test_steering_is_preferred_to_follow_ups_at_the_stop_point() -> None:
    host = QueueHost(scripted(reply("a"), reply("b"), reply("c")))
    host.queues.follow_up(user_message("later"), "later")
    host.queues.steer(user_message("now"), "now")
    await loop_of(host, Recorder()).run([user_message("go")])
    assert _user_texts(host) == ["go", "now", "later"]


async def test_an_error_ends_the_run_and_leaves_the_queues_alone() -> None:
    from pi_context.testing import failure

    host = QueueHost(scripted(failure("boom")))
    host.queues.follow_up(user_message("later"), "later")
    result = await loop_of(host, Recorder()).run([user_message("go")])
    assert not result.aborted
    assert host.queues.has_follow_up()


# -- properties -----------------------------------------------------------------------------------

_OPS = st.lists(
    st.tuples(
        st.sampled_from(["steer", "follow_up", "drain_steering", "drain_follow_up", "mode"]),
        st.sampled_from(["all", "one-at-a-time"]),
    ),
    max_size=40,
)


@given(_OPS)
def test_every_queued_message_comes_out_once_in_order(ops: list[tuple[str, str]]) -> None:
    queues = MessageQueues()
    queued: dict[str, list[str]] = {"steering": [], "follow_up": []}
    delivered: dict[str, list[str]] = {"steering": [], "follow_up": []}
    for n, (op, mode) in enumerate(ops):
        if op == "steer":
            queues.steer(user_message(f"s{n}"), f"s{n}")
            queued["steering"].append(f"s{n}")
        elif op == "follow_up":
            queues.follow_up(user_message(f"f{n}"), f"f{n}")
            queued["follow_up"].append(f"f{n}")
        elif op == "mode" and is_queue_mode(mode):
            queues.steering_mode = queues.follow_up_mode = mode
        elif op.startswith("drain"):
            kind = "steering" if op == "drain_steering" else "follow_up"
            waiting = len(queued[kind]) - len(delivered[kind])
            mode_now = queues.steering_mode if kind == "steering" else queues.follow_up_mode
            out = _texts(
                queues.drain_steering() if kind == "steering" else queues.drain_follow_up()
            )
            assert len(out) == (min(waiting, 1) if mode_now == "one-at-a-time" else waiting)
            delivered[kind].extend(out)
    for kind in ("steering", "follow_up"):
        assert delivered[kind] == queued[kind][: len(delivered[kind])]  # FIFO, no repeats
    queues.clear()
    assert not queues
