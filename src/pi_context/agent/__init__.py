"""The agent: the loop, the library facade and the collaborators it is composed of.

::

    from pi_context.agent import AgentSession

    sess = await AgentSession.create(cwd="/my/project", model=model)
    async for event in sess.prompt("Fix the failing test"):
        print(event.to_json())

``AgentSession`` (:mod:`.session`) is a facade; each phase lives in its own module:
:mod:`.options` and :mod:`.state` (what the collaborators share), :mod:`.loadout` (tools,
active set, system-prompt patch), :mod:`.request` (the request
pipeline), :mod:`.loop` and :mod:`.loop_callbacks` (turns and what they need),
:mod:`.run_control` (one run until it settles), :mod:`.recovery` (retries and overflow
recovery), :mod:`.compaction_control` and :mod:`.compaction_decision` (when and how to
compact), :mod:`.navigation` (``/tree``), :mod:`.extension_dispatch` and
:mod:`.extension_actions` (extension hooks around the loop; what extensions may do). Events are :mod:`pi_context.events`.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
