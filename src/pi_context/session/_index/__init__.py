"""(private) The lean index of a session file (``file_index``) and its parallel build
(``build``), for ``pictx session info``, ``tree`` and ``context``."""
