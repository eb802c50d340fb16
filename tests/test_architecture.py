"""The layout rule: the core parts import nothing from Slack, the database or the scheduler.

Checked two ways: statically over every module of the core packages (so a lazy import inside a
function is caught too), and by importing the core in a fresh interpreter and looking at sys.modules.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE_MODULES = sorted(
    [
        *(ROOT / "chatbot" / "digest").glob("*.py"),
        *(ROOT / "chatbot" / "search").glob("*.py"),
        *(ROOT / "chatbot" / "answers").glob("*.py"),
        *(ROOT / "chatbot" / "text").glob("*.py"),
        ROOT / "chatbot" / "daily" / "picker.py",
        ROOT / "chatbot" / "daily" / "subscription.py",
        ROOT / "chatbot" / "daily" / "topics.py",
    ]
)
FORBIDDEN_TOP = {
    "slack_bolt",
    "slack_sdk",
    "sqlalchemy",
    "apscheduler",
    "alembic",
    "psycopg",
    "starlette",
    "uvicorn",
}
FORBIDDEN_OWN = ("chatbot.slack", "chatbot.store", "chatbot.wiring", "chatbot.settings", "chatbot.cli")
FORBIDDEN_OWN_DAILY = ("chatbot.daily.poster", "chatbot.daily.scheduler", "chatbot.daily.announcer")


def imported_names(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports, with its line, wherever the import statement stands."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def test_core_package_list_is_not_empty() -> None:
    names = {p.relative_to(ROOT / "chatbot").as_posix() for p in CORE_MODULES}
    assert {"digest/model.py", "digest/library.py", "search/index.py", "answers/answerer.py"} <= names
    assert "daily/picker.py" in names


@pytest.mark.parametrize("path", CORE_MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_core_module_imports_no_adapter(path: Path) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for line, name in imported_names(path)
        if name.split(".")[0] in FORBIDDEN_TOP
        or name.startswith(FORBIDDEN_OWN)
        or name.startswith(FORBIDDEN_OWN_DAILY)
    ]
    assert bad == []


def test_rule_catches_an_adapter_import(tmp_path: Path) -> None:
    """The checker itself: a core-looking module that imports SQLAlchemy inside a function is flagged."""
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from sqlalchemy import text\n    from chatbot.store import SqlStore\n")
    names = [name for _, name in imported_names(module)]
    assert "sqlalchemy" in names
    assert "chatbot.store" in names


def test_importing_the_core_loads_no_adapter() -> None:
    code = (
        "import sys\n"
        "import chatbot.digest, chatbot.search, chatbot.answers, chatbot.daily, chatbot.text\n"
        "import chatbot.daily.subscription, chatbot.daily.topics\n"
        "from chatbot.daily import pick_entry\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{sorted(FORBIDDEN_TOP)!r} or m.startswith({FORBIDDEN_OWN + FORBIDDEN_OWN_DAILY!r}))\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == ""


def test_daily_package_loads_no_adapter() -> None:
    """The daily package names the picker only: its adapters are imported from their own modules."""
    code = "import sys\nimport chatbot.daily\nprint('sqlalchemy' in sys.modules, 'chatbot.daily.poster' in sys.modules)\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.split() == ["False", "False"]


# The import graph of all of chatbot/: no circles, and no import up the layers. A module's layer is
# that of the longest name below that is a prefix of it; a new module must find its place here.
LAYERS: tuple[tuple[str, ...], ...] = (
    # core: reads the digest, searches, answers, picks the day's entry
    (
        "chatbot",
        "chatbot.text",
        "chatbot.digest",
        "chatbot.search",
        "chatbot.search.sharing",
        "chatbot.answers",
        "chatbot.daily",
        "chatbot.daily.picker",
        "chatbot.daily.subscription",
        "chatbot.daily.topics",
        "chatbot.yamlfast",
        "chatbot.heap",
        "chatbot.snapshot",
        "chatbot.expiring",
        "chatbot.executors",
        # the search package, module by module
        "chatbot.search.build",
        "chatbot.search.display",
        "chatbot.search.fields",
        "chatbot.search.postings",
        "chatbot.search.query",
        "chatbot.search.stopwords",
    ),
    # adapters: settings, the database, GitHub, the model server, usage, metrics, the daily runtime
    (
        "chatbot.settings",
        "chatbot.store",
        "chatbot.github",
        "chatbot.llm",
        "chatbot.usage",
        "chatbot.observability",
        "chatbot.daily.poster",
        "chatbot.daily.scheduler",
        "chatbot.daily.announcer",
        "chatbot.live",
        "chatbot.slack.webapi",  # posting once: the daily jobs' and the handlers' Slack calls
    ),
    # the Slack edge: Bolt app, handlers, blocks, Socket Mode
    ("chatbot.slack",),
    # composition and entry points
    (
        "chatbot.wiring",
        "chatbot.cli",
        "chatbot.serve",
        "chatbot.console",
        "chatbot.bot",
        "chatbot.builders",
        "chatbot.daily.jobs",
    ),
)
# Circles or upward imports not fixed yet, each with why: this list only shrinks.
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()


def module_files() -> dict[str, Path]:
    """Every module of chatbot/ by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in sorted((ROOT / "chatbot").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def own_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The chatbot modules one module imports (lazy and type-checking imports too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*kept, base] if base else kept)
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return {target for target in found if target in modules and target != name}


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: own_imports(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int:
    best = max(
        (
            (len(prefix), level)
            for level, names in enumerate(LAYERS)
            for prefix in names
            if module == prefix or module.startswith(prefix + ".")
        ),
        default=None,
    )
    assert best is not None, f"{module} is in no layer of tests/test_architecture.py LAYERS"
    return best[1]


def strongly_connected(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Tarjan's algorithm, iterative: the groups of modules that import each other round a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, set())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(frozenset(group))
    return groups


def test_every_module_has_a_layer() -> None:
    for module in module_files():
        layer_of(module)


def test_no_import_circles() -> None:
    assert set(strongly_connected(import_graph())) <= KNOWN_CYCLES


def test_no_import_up_the_layers() -> None:
    upward = {
        (module, target)
        for module, targets in import_graph().items()
        for target in targets
        if layer_of(target) > layer_of(module)
    }
    assert upward <= KNOWN_UPWARD, sorted(upward - KNOWN_UPWARD)


def test_graph_checks_catch_a_circle_and_an_upward_import() -> None:
    graph = {
        "chatbot.digest.a": {"chatbot.digest.b"},
        "chatbot.digest.b": {"chatbot.digest.a", "chatbot.slack.x"},
    }
    assert strongly_connected(graph) == [frozenset({"chatbot.digest.a", "chatbot.digest.b"})]
    assert layer_of("chatbot.slack.x") > layer_of("chatbot.digest.b")
    assert layer_of("chatbot.daily.poster") > layer_of("chatbot.daily.picker")
