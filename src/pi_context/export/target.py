"""Exporting a session to a file whose name chooses the format, after checking the target."""

from __future__ import annotations

from pathlib import Path

from pi_context.errors import SessionError
from pi_context.export.document import SessionDocument

__all__ = ["export_file"]


def export_file(
    doc: SessionDocument, out: str | Path | None = None, *, cwd: Path | None = None
) -> Path:
    """Export ``doc`` by the target's extension: ``.jsonl`` → branch session, else HTML.

    Without ``out`` an HTML page named ``pi-session-<basename>.html`` goes into ``cwd``. A
    target that is the session itself or any other session file, a directory, or a file in a
    directory that does not exist is refused (:class:`~pi_context.errors.SessionError`):
    nothing is written and no directory is created.
    """
    from pi_context.export.html import default_html_name, export_html
    from pi_context.export.jsonl import export_jsonl
    from pi_context.session_dirs import refuse_session_target

    base = cwd or Path.cwd()
    if out is None:
        target = base / default_html_name(doc.path)
        refuse_session_target(target, doc.path)
        return export_html(doc, target)
    target = Path(out)
    if not target.is_absolute():
        target = base / target
    refuse_session_target(target, doc.path)
    _refuse_unwritable_target(target, doc.path)
    if target.suffix == ".jsonl":
        return export_jsonl(doc, target)
    return export_html(doc, target)


def _refuse_unwritable_target(target: Path, source: Path | None) -> None:
    """A directory is not a place to export to (a missing directory is refused by the
    writers: :func:`~pi_context.export.document.export_target`)."""
    from pi_context.export.html import default_html_name

    if target.is_dir():
        example = target / default_html_name(source)
        raise SessionError(
            f"is a directory; name the file to write (for example {example})", path=target
        )
