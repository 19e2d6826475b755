"""(private) Loading a session file: lines split (``lines``), scanned and migrated (``scan``),
held as columns (``columns``), and the fields of pi's entries checked (``checks``)."""
