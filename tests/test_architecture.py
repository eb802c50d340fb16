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


def test_adapter_names_of_daily_load_on_use() -> None:
    code = (
        "import sys\n"
        "import chatbot.daily as daily\n"
        "before = 'sqlalchemy' in sys.modules\n"
        "poster = daily.DailyPoster\n"
        "print(before, 'sqlalchemy' in sys.modules, poster.__module__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.split() == ["False", "True", "chatbot.daily.poster"]
