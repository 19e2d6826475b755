"""Session stores: pi sessions kept in a directory of JSONL files, in PostgreSQL, or in memory.

::

    store = await open_store("postgresql://...")   # or a directory, "file:DIR", "memory:"
    await store.migrate()
    ref = await store.import_jsonl("session.jsonl", tenant="acme")
    result = await store.append(ref, [entry], if_leaf=leaf)
    stored = await store.load(ref)                  # .header, .entries, .session()
    hits = await store.search(ref, "release tag")
    wide = await store.search_tenant("acme", "release tag")  # every session of a tenant
    async with store.lease(ref, owner="replica-1", ttl=30): ...

Every store keeps a session as the lines of its pi file, byte for byte: an imported file
exports as it was; ``load`` reads those bytes with the session package's reader, so a stored
session projects exactly as its file does. The rules of an append, whatever the store:

* the entries are pi entry mappings (or :class:`~pi_context.session.Entry`): a string
  ``type`` and ``id``, a ``parentId`` naming an entry of the session or of the batch before it
  (or null); a broken rule is :class:`InvalidEntryError` naming the entry, nothing stored;
* ``if_leaf=X`` appends only while the session's leaf (its last entry) is ``X``, else
  :class:`LeafMovedError`; without it two writers on one parent make siblings, never an
  interleaved chain;
* a batch whose ids are all stored with the same bytes returns the stored result (a retry
  after a lost acknowledgement); a stored id with other bytes is an error;
* a ref of another tenant is :class:`SessionNotFoundError` and writes nothing.

A v1/v2 session file is imported and exported as it is, but not appended to (the file store
would rewrite it as v3). The file store writes a batch in one write under the session file's
lock, then fsyncs it; the PostgreSQL store in one statement.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
