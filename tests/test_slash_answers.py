"""The slash command's listener path: one answer-cache lookup per uncached command."""

from __future__ import annotations

from typing import Any


def test_an_uncached_command_looks_in_the_answer_cache_once(seed_library: Any) -> None:
    """The listener looks the answer up before answering; the answer path does not again."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    from chatbot.search.index import SearchIndex
    from chatbot.slack.handlers.command import Answers, CommandHandler, Request

    lookups: list[Request] = []

    class Counted(Answers):
        def cached(self, request: Request, offset: int = 0, lang: Any = None) -> Any:
            lookups.append(request)
            return super().cached(request, offset, lang)

    answers = Counted(SearchIndex.build(seed_library.entries), lambda n: [], lambda: None, "en")
    with ThreadPoolExecutor(1) as pool:
        handler = CommandHandler(answers, pool)
        command = {"text": "compile", "user_id": "U1"}
        first = json.loads(str(handler(command, respond=None).body))
        assert len(lookups) == 1  # missed, then answered without a second look
        again = json.loads(str(handler(command, respond=None).body))
        assert len(lookups) == 2 and again == first  # the second time, from the cache
