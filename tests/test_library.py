"""The digest library: the bundled digest loads whole, broken files are reported and skipped."""

from __future__ import annotations

from chatbot.library import Library


def test_bundled_digest_loads_eight_entries_with_pr_metadata(seed_library: Library) -> None:
    assert seed_library.problems == []
    assert [e.pr for e in seed_library] == [54537, 53529, 52068, 54492, 52912, 53574, 54509, 54501]
    assert all(e.url == f"https://github.com/vllm-project/vllm/pull/{e.pr}" for e in seed_library)
