"""How much of vLLM the glossary covers: the share of vLLM's engine arguments and documented
features (chatbot/search/data/vllm_sources.yaml, names read from vLLM's source) that name a
glossary concept, as a query would.

    .venv/bin/python bench/vocabulary.py [--missing]

An engine argument counts when the glossary finds a concept in its name as a user writes it
(`--enable-sleep-mode` → sleep mode); a feature when its page's title names one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chatbot.search import Glossary  # noqa: E402

SOURCES = ROOT / "chatbot" / "search" / "data" / "vllm_sources.yaml"


def resolved(glossary: Glossary, names: list[str]) -> tuple[list[str], list[str]]:
    """(names that name a concept, names that do not)."""
    hits = [n for n in names if glossary.expand(n)]
    return hits, [n for n in names if n not in hits]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--missing", action="store_true", help="list the names that resolve to nothing")
    args = parser.parse_args()
    sources = yaml.safe_load(SOURCES.read_text(encoding="utf-8"))
    glossary = Glossary.load()
    flags = ["--" + name.replace("_", "-") for name in sources["engine_args"]["names"]]
    titles = list(sources["features"]["names"].values())
    print(f"glossary: {len(glossary)} concepts")
    for label, names in (("engine arguments", flags), ("documented features", titles)):
        hits, missing = resolved(glossary, names)
        print(f"{label}: {len(hits)}/{len(names)} resolve to a concept ({len(hits) / len(names):.0%})")
        if args.missing and missing:
            print("  missing: " + ", ".join(missing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
