"""The English typo pass of follow-up intents: a misspelt keyword still finds its kind.

Every question here misses every phrasing of `followup_intents.yaml` exactly, so only the
fuzzy second pass (`_classify_typo`) can classify it.
"""

from __future__ import annotations

import pytest

from chatbot.answers.intents import classify, intent_rules, normalize_question


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("what should I focsu on?", "focus"),
        ("who was the reviwer?", "reviewers"),
        ("how was it tetsed?", "tests"),
        ("what are the desgin choices", "design"),
        ("summray please", "summary"),
        ("who shuold read this", "audience"),
        ("is there a relatd PR", "related"),
    ],
)
def test_a_misspelt_keyword_is_understood(question: str, intent: str) -> None:
    text = normalize_question(question)
    exact = [rule for rule in intent_rules() if rule.pattern.search(text)]
    assert all(not rule.phrase for rule in exact), "not a typo: matches a phrase exactly"
    assert classify(question) == intent


@pytest.mark.parametrize("question", ["hello there friend", "patch notes", "the weather today"])
def test_words_that_only_look_alike_stay_other(question: str) -> None:
    assert classify(question) == "other"
