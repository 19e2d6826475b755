"""The click subcommands of ``pictx``, one module per command group.

``cli/group`` names each one (``module:attr``) in its lazy command table, so a subcommand's
module is imported only when that subcommand runs. ``chat`` is the agent itself (the default
command); the others read and edit sessions, models and prompts without running the agent.
"""
