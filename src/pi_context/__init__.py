"""pi-context: the context engine of a coding agent, compatible with pi 1.6.0's sessions.

The names of this package (listed once, in ``__init__.pyi``) cover the main jobs; everything
else lives in the subpackages (:mod:`pi_context.session`, :mod:`pi_context.prompt`,
:mod:`pi_context.compaction`, :mod:`pi_context.providers`, ...).

Open and project a session::

    with Session.open("session.jsonl") as session:
        messages = session.projection().messages

Build a system prompt::

    resources = ResourceLoader("path/to/project").load()
    text = system_prompt_for(resources, default_tools())

Run an agent, and test it with fakes (the events it yields are importable from here too)::

    agent = await AgentSession.create(cwd=".", model=ScriptedModel([reply("hi")]))
    events = await agent.run("hello")

Importing this package has no side effects: nothing is read, written, printed or registered,
and nothing else is imported until a name is used (``pictx --version`` must not load the
agent); each name is imported from its module on first access (:mod:`pi_context._lazy`).
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
