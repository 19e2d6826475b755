"""The interactive terminal UI (prompt_toolkit): the read-run-render loop and what it shows.

``mode`` is the loop, ``shell`` the small interface the commands see, ``render`` and
``progress`` draw events; ``slash/`` holds the slash commands, ``pickers/`` the list pickers
and ``tree/`` the ``/tree`` selector.
"""
