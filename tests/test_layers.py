"""The layering docs/architecture.md draws, checked on the source.

Every ``import`` counts: module level, inside functions and under ``TYPE_CHECKING``, and a
package's ``__init__.pyi``, whose imports are the package's names (``_lazy.attach_stub``
imports them on first use). A lower layer never imports a higher one, and no two modules
import each other, however indirectly.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pi_context

PACKAGE_DIR = Path(pi_context.__file__).parent

# Each top-level unit of the package and the layer it sits in; a unit may import only units in
# its own layer or below. Keep in step with docs/architecture.md.
LAYERS: dict[str, int] = {
    "_json": 0,
    "_records": 0,
    "_regular_files": 0,
    "_keywords": 0,
    "_version": 0,
    "_lazy": 0,
    "errors": 0,
    "messages": 1,
    "tokens": 2,
    "images": 2,
    "session": 2,
    "session_dirs": 3,
    "store": 3,
    "prompt": 3,
    "resources": 3,
    "model": 4,
    "compaction": 5,
    "tools": 6,
    "providers": 6,
    "events": 7,
    "mcp": 7,
    "extensions": 8,
    "agent": 9,
    "testing": 10,
    "export": 10,
    "integrations": 10,
    "cli": 11,
    "__main__": 12,
    "__init__": 12,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> Iterator[str]:
    """Every pi_context module ``path`` imports, resolved to absolute names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_name(path)
    if path.stem != "__init__":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pi_context"):
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("pi_context"):
                # ``from pkg import mod`` imports the module; ``from pkg import name`` the package.
                submodules = [f"{target}.{alias.name}" for alias in node.names]
                yield from submodules
                if not all(m in modules for m in submodules):
                    yield target


def _sources(path: Path) -> list[Path]:
    """A module's source, and for a package its stub too: the stub's imports are what the
    package imports when its names are first read."""
    stub = path.with_suffix(".pyi")
    return [path, stub] if path.name == "__init__.py" and stub.exists() else [path]


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE_DIR.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = {
            t
            for source in _sources(path)
            for t in _imports(source, set(files))
            if t in files and t != name
        }
        graph[name] = targets
    return graph


def test_a_package_stub_is_read_as_the_package_s_imports() -> None:
    """The stub is where a package's edges are written (its ``__init__.py`` imports only
    ``_lazy``): each module a stub names is an edge of the package."""
    graph = _graph()
    stubs = sorted(PACKAGE_DIR.rglob("__init__.pyi"))
    assert stubs
    for stub in stubs:
        package = _module_name(stub)
        named = {t for t in _imports(stub, set(graph)) if t in graph}
        assert named, stub
        assert named <= graph[package] | {package}, package
    assert "pi_context.session.store" in graph["pi_context.session"]


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_unit_has_a_layer() -> None:
    units = {_unit(m) for m in _graph()}
    assert units <= set(LAYERS), f"place these in LAYERS and the docs: {units - set(LAYERS)}"


def test_no_unit_imports_a_higher_layer() -> None:
    wrong = sorted(
        f"{src} imports {dst}"
        for src, targets in _graph().items()
        for dst in targets
        if LAYERS[_unit(dst)] > LAYERS[_unit(src)]
    )
    assert wrong == []


def test_the_agent_reaches_models_only_through_the_model_seam() -> None:
    """What the agent needs of a model (its stream, how it delivers system text for cache
    accounting, the message assembled from deltas) it asks :mod:`pi_context.model`, never an
    adapter's modules, so any :class:`~pi_context.model.Model` works the same. One edge is
    allowed: ``AgentSession.create(model="provider/id")`` resolves that text through the public
    model registry (``pi_context.providers``), and only the options check does it."""
    allowed = {("pi_context.agent.options", "pi_context.providers")}
    wrong = sorted(
        f"{src} imports {dst}"
        for src, targets in _graph().items()
        if _unit(src) == "agent"
        for dst in targets
        if _unit(dst) == "providers" and (src, dst) not in allowed
    )
    assert wrong == []


def test_no_import_cycle() -> None:
    graph = _graph()
    # A package's __init__ re-exporting its submodules is not a cycle of concepts: the edge from
    # a submodule to its own package's __init__ is the one Python resolves first, so ignore it.
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if node.startswith(nxt + "."):
                continue
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == []


# The CLI is laid out by product (docs/architecture.md, "The CLI"): a new module goes into one of
# these packages, or the map and this set change together.
CLI_PACKAGES = {
    "pi_context.cli.app",
    "pi_context.cli.commands",
    "pi_context.cli.interactive",
    "pi_context.cli.interactive.pickers",
    "pi_context.cli.interactive.slash",
    "pi_context.cli.interactive.tree",
    "pi_context.cli.rpc",
}
CLI_TOP_LEVEL = {
    "collector",
    "command_line",
    "entry_help",
    "group",
    "lazy_group",
    "main",
    "print_mode",
    "terminal_text",
}
# Modules outside cli/interactive that import it: chat starts interactive mode. Print mode, RPC,
# app/ (the seam and its value types) and the other subcommands must not.
IMPORTS_INTERACTIVE = {"pi_context.cli.commands.chat"}


def _cli_modules() -> set[str]:
    return {m for m in _graph() if m == "pi_context.cli" or m.startswith("pi_context.cli.")}


def test_cli_is_laid_out_by_product() -> None:
    cli_dir = PACKAGE_DIR / "cli"
    packages = {_module_name(p.parent / "__init__.py") for p in cli_dir.rglob("__init__.py")}
    assert packages - {"pi_context.cli"} == CLI_PACKAGES
    top = {p.stem for p in cli_dir.glob("*.py")} - {"__init__"}
    assert top == CLI_TOP_LEVEL


def test_print_mode_rpc_and_subcommands_do_not_import_the_terminal_ui() -> None:
    graph = _graph()
    inside = "pi_context.cli.interactive"
    importers = {
        src
        for src in _cli_modules()
        if not (src == inside or src.startswith(inside + "."))
        and any(dst == inside or dst.startswith(inside + ".") for dst in graph[src])
    }
    assert importers == IMPORTS_INTERACTIVE


def test_the_cli_map_names_every_cli_module() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(
        encoding="utf-8"
    )
    section = doc.split("\n## The CLI\n", 1)[1].split("\n## ", 1)[0]
    missing = sorted(
        m
        for m in _cli_modules()
        if not m.endswith(".__init__") and m not in CLI_PACKAGES | {"pi_context.cli"}
        if f"`{m.removeprefix('pi_context.').replace('.', '/')}`" not in section
    )
    assert missing == [], f"add these to the CLI map in docs/architecture.md: {missing}"


# The seam between the front ends and the agent (docs/architecture.md, "The CLI"): interactive
# mode, RPC mode and print mode reach the agent through cli/app's AgentApi, never by importing
# the agent's or the providers' modules.
FRONT_ENDS = ("pi_context.cli.interactive", "pi_context.cli.rpc", "pi_context.cli.print_mode")
AGENT_INTERNALS = ("pi_context.agent", "pi_context.providers")
SEAM = "pi_context.cli.app.agent_api"
UI_LIBRARIES = ("prompt_toolkit", "rich")


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_front_ends_reach_the_agent_through_the_seam() -> None:
    graph = _graph()
    wrong = sorted(
        f"{src} imports {dst}"
        for src, targets in graph.items()
        if _under(src, FRONT_ENDS)
        for dst in targets
        if _under(dst, AGENT_INTERNALS)
    )
    assert wrong == []
    # each front end does use the seam (else this test would pass on a front end that vanished)
    for front in ("pi_context.cli.interactive.shell", "pi_context.cli.rpc.runtime"):
        assert SEAM in graph[front], front
    assert SEAM in graph["pi_context.cli.print_mode"]


def _third_party_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
    return found


def test_the_seam_and_its_value_types_import_no_ui() -> None:
    """cli/app (the seam and its value types, such as ModelChoice) is what print and RPC mode
    load: no terminal UI library, no interactive module."""
    app_dir = PACKAGE_DIR / "cli" / "app"
    wrong = sorted(
        f"{path.name} imports {name}"
        for path in app_dir.glob("*.py")
        for name in _third_party_imports(path)
        if _under(name, UI_LIBRARIES) or _under(name, ("pi_context.cli.interactive",))
    )
    assert wrong == []


def test_the_architecture_doc_names_every_module() -> None:
    """One row per module in docs/architecture.md: a module outside cli/ is named by its path
    (`session/store`, `tokens`), as the CLI map names cli/'s."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(
        encoding="utf-8"
    )
    missing = sorted(
        name
        for m in _graph()
        if not m.startswith("pi_context.cli") and not m.endswith(".__init__") and m.count(".") >= 1
        for name in [m.removeprefix("pi_context.").replace(".", "/")]
        if (PACKAGE_DIR / name).is_dir() is False and f"| `{name}` |" not in doc
    )
    assert missing == [], f"add a row for each to docs/architecture.md: {missing}"
