"""`vllm-digest query TOPIC --json` in a fresh interpreter, as a user runs it: the ranked hits."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any


def query_json(query: str, env: Mapping[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "query", query, "--json"],
        capture_output=True,
        text=True,
        env=dict(env),
        check=True,
        timeout=60,
    )
    hits: list[dict[str, Any]] = json.loads(done.stdout)
    return hits
