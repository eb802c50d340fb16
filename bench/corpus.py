"""The synthetic library the benches measure: entries that look like the bundled digest, written
as digest files (raw text + `.meta.yaml`), so a bench times parsing as a user's `serve` does.

Deterministic (seeded): the same size gives the same files in every run and every bench.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from chatbot.digest import Entry, Library
from chatbot.search import Glossary
from chatbot.search.glossary import BUNDLED

ROOT = Path(__file__).resolve().parent.parent
REPO = "vllm-project/vllm"
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
PER_FILE = 100  # entries per monthly digest file


def corpus_glossary() -> Glossary:
    """The glossary the synthetic library is drawn from: `glossary.yaml` alone, so the library and
    its queries stay the ones earlier figures were measured on when vLLM's vocabulary grows (the
    index is built with the whole glossary)."""
    return Glossary.load([BUNDLED], bundled=False)


def seed_entries() -> list[Entry]:
    return Library.load(ROOT / "digests").entries


def synthetic_notes(seed: Sequence[Entry], glossary: Glossary, size: int) -> list[dict[str, object]]:
    """Titles, notes and metadata: Chinese notes with code names, English tags, PR refs."""
    rng = random.Random(20260831)
    sentences = [s for e in seed for s in re.split(r"(?<=[。；])", e.note) if s.strip()]
    title_words = [w for e in seed for w in re.split(r"[\s，]+", e.title) if w]
    concepts = list(glossary.concepts.values())
    people = sorted({e.author for e in seed if e.author} | {p for e in seed for p in e.people})
    items: list[dict[str, object]] = []
    for n in range(size):
        picked = rng.sample(concepts, 3)
        zh_terms = [t for c in picked for t in c.zh] or ["修复"]
        en_terms = [t for c in picked for t in c.en] or ["refactor"]
        title = (
            f"{rng.choice(['修复', '新增', '重构', '优化'])} {rng.choice(en_terms)} "
            f"{rng.choice(zh_terms)}{rng.choice(title_words)} {n}"
        )
        note = (
            "值得精读。"
            + "".join(rng.sample(sentences, 3))
            + f"涉及 {rng.choice(en_terms)} 与 {rng.choice(zh_terms)}。"
        ).replace("\n", "")
        items.append(
            {
                "title": title,
                "note": note,
                "pr": 60000 + n,
                "author": rng.choice(people),
                "tags": [c.display for c in picked],
                "related": [60000 + rng.randrange(size), 40000 + rng.randrange(20000)],
            }
        )
    return items


def distinct_queries(count: int) -> list[str]:
    """Queries a user could type, none repeated: the relevance set, glossary terms, pairs."""
    relevance = yaml.safe_load((ROOT / "tests/relevance_queries.yaml").read_text(encoding="utf-8"))
    queries = dict.fromkeys(str(q["query"]) for q in relevance["queries"])
    terms = [t for c in corpus_glossary().concepts.values() for t in c.terms]
    rng = random.Random(12)
    queries.update(dict.fromkeys(rng.sample(terms, min(len(terms), count))))
    while len(queries) < count:
        queries[f"{rng.choice(terms)} {rng.choice(terms)}"] = None
    return list(queries)[:count]


def write_library(folder: Path, size: int, glossary: Glossary | None = None) -> Path:
    """`size` entries as monthly digest files of `PER_FILE` entries in `folder` (made if missing)."""
    items = synthetic_notes(seed_entries(), glossary or corpus_glossary(), size)
    return write_items(folder, items, "bench-digest")


def write_items(folder: Path, items: Sequence[Mapping[str, object]], prefix: str) -> Path:
    """Items (title, note and metadata) as digest files of `PER_FILE` entries in `folder` (made if
    missing): the raw text and its `.meta.yaml`, the two forms a curator's folder holds."""
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(items), PER_FILE):
        name = f"{prefix}-{start // PER_FILE:05d}"
        chunk = items[start : start + PER_FILE]
        text = REPO + "\n\n" + "".join(f"{i['title']}\n\n{i['note']}\n\n" for i in chunk)
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
        meta = {
            "repo": REPO,
            "digest": name,
            "entries": [{k: v for k, v in i.items() if k != "note"} for i in chunk],
        }
        (folder / f"{name}.meta.yaml").write_text(
            yaml.dump(meta, Dumper=_DUMPER, allow_unicode=True, sort_keys=False), encoding="utf-8"
        )
    return folder
