"""The context-economy benchmark (issue 13): the same coding workload through pi 1.6.0 and
pictx, billed by a provider simulator that accounts for prompt caching as each provider
documents it.

Modules: :mod:`.cache_anthropic` and :mod:`.cache_openai` (the caching rules, pure),
:mod:`.tokens` (the tokenizer every contender is counted with), :mod:`.pricing`,
:mod:`.wire` (requests in, SSE out, per API), :mod:`.workload` (the seeded project and
prompts), :mod:`.responder` (what the simulated assistant answers), :mod:`.server` (the HTTP
simulator), :mod:`.contenders` and :mod:`.drive` (running each agent as a user would),
:mod:`.report` (tables and the plot). Run it with ``python -m benchmarks.economy``.
"""
