"""The slash commands typed at the interactive prompt (``/model``, ``/tree``, ``/resume``, ...).

``commands`` holds the registry and each command's text form; ``pickers`` the forms that open a
list picker when the input is a terminal.
"""
