"""(private) Loading a session file: split into lines, scanned and migrated (``scan``), held
as columns (``columns``), and the fields of pi's entries checked (``checks``)."""
