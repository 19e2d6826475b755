"""``pictx``, the command line: the click entry point and its front ends.

``main`` is the entry point and ``group`` lists the subcommands, which live in ``commands/``
(one module per command group). ``print_mode`` is ``-p`` / ``--mode json``, ``rpc/`` is
``--mode rpc`` and ``interactive/`` is the terminal UI; ``app/`` is the application they share (configuration, the
choice of model and session, the seam to the agent). ``terminal_text`` makes what they show
safe for a terminal. docs/architecture.md maps every module.
"""
