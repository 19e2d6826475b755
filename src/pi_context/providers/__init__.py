"""Real models: the model registry, ``models.json``, credentials and the provider adapters.

Resolve a model the way ``pictx --model`` does and hand it to an agent::

    from pi_context.providers import resolve_model

    model = resolve_model("anthropic/claude-sonnet-4-5", require_credentials=True)
    sess = await AgentSession.create(cwd=".", model=model)

``AgentSession.create(model="provider/id")`` does the same. The registry holds pi's built-in
models plus ``<agentDir>/models.json`` (custom providers such as an OpenAI-compatible server on
``127.0.0.1``); keys come from ``--api-key``, ``auth.json``, ``models.json`` templates or the
provider's environment variables. Without ``require_credentials`` a missing key is reported by
the model's first request; :meth:`ModelRegistry.credentials` tells it without raising.

The modules, one concept each: :mod:`.registry` (the registry, credentials, model selection),
:mod:`.models_json` (the file's parser and entries), :mod:`.key_templates` (``$VAR`` and
``!command`` values), :mod:`.adapters` (the adapter for an entry, by API), one module per API
(:mod:`.anthropic`, :mod:`.openai`, :mod:`.openai_responses`, :mod:`.google`) and the embedded
model (:mod:`.local` and its ``local_*`` helpers).

Importing this package loads nothing else: each name is imported from its module on first use.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
