"""The list pickers of the interactive UI: one generic full-screen list and its uses.

``list`` is the generic picker (filtering, scrolling, keys); ``model``, ``session``, ``fork``
and ``thinking`` build its rows for ``/model``, ``/resume``, ``/fork`` and ``/thinking``.
"""
