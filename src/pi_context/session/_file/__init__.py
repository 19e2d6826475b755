"""(private) The file behind a session: opening regular files only (``opening``), the advisory
lock (``locking``), appends and atomic rewrites (``writer``), and the file's life (``storage``)."""
