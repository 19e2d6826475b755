"""The agent: the loop, the library facade and the collaborators it is composed of.

::

    from pi_context.agent import AgentSession

    sess = await AgentSession.create(cwd="/my/project", model=model)
    async for event in sess.prompt("Fix the failing test"):
        print(event.to_json())

``AgentSession`` (:mod:`.session`) is a facade; each phase lives in its own module:
:mod:`.options` and :mod:`._state` (what the collaborators share), :mod:`.loadout` (tools,
active set, system-prompt patch), :mod:`.queues` (steering and follow-up),
:mod:`._request` and :mod:`._transform` (the request pipeline), :mod:`._loop` (turns),
:mod:`._run` (one run until it settles: the prompt, the loop's callbacks, retries and overflow
recovery, what extensions may do), :mod:`._compaction` (when and how to compact),
:mod:`.navigation` (``/tree``), :mod:`._extension_hooks` (extension hooks around the loop),
:mod:`.stats` (totals and prompt-cache accounting). Events are :mod:`pi_context.events`.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
