from .document import SessionDocument as SessionDocument
from .html import default_html_name as default_html_name
from .html import export_html as export_html
from .html import render_html as render_html
from .jsonl import default_jsonl_name as default_jsonl_name
from .jsonl import export_jsonl as export_jsonl
from .target import export_file as export_file

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
