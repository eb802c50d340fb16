"""The interface words (`chatbot/slack/data/strings.yaml`): every key in both languages, with the
same `{fields}`, and every key the code names literally is there."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
import yaml

from chatbot.slack.i18n import LANGUAGES, STRINGS_FILE, Texts, catalogue

ROOT = Path(__file__).resolve().parent.parent / "chatbot"
# `texts("key"`, `texts.mrkdwn("key"`, `Texts(lang)("key"`: the ways the code names a string.
LITERAL_KEY = re.compile(r"""(?:\btexts|\bt|\))(?:\.mrkdwn)?\(\s*"([a-z_]+(?:\.[a-z_]+)*)\"""")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_key_has_both_languages_with_the_same_fields() -> None:
    raw = yaml.safe_load((ROOT / "slack" / STRINGS_FILE).read_text(encoding="utf-8"))
    assert len(raw) == len(catalogue()) > 90
    for key, texts in raw.items():
        assert set(texts) == set(LANGUAGES), key
        assert all(isinstance(texts[lang], str) and texts[lang].strip() for lang in LANGUAGES), key
        assert _fields(texts["en"]) == _fields(texts["zh"]), key


def test_every_key_the_code_names_is_in_the_file() -> None:
    named = {
        key for path in ROOT.rglob("*.py") for key in LITERAL_KEY.findall(path.read_text(encoding="utf-8"))
    }
    assert {"help.body", "share.failed", "sub.unknown", "followup.failed"} <= named  # the scan sees them
    assert sorted(named - set(catalogue())) == []


def test_texts_fill_fields_and_escape_for_mrkdwn() -> None:
    assert Texts("en")("share.failed", error="x") == "Sharing failed (x); please try again."
    assert Texts("zh")("share.failed", error="x") == "分享失败（x），请稍后再试。"
    assert Texts("en").mrkdwn("no_match", query="<a&b>") == "No entry matches “&lt;a&amp;b&gt;”."
    assert "`/vllm-digest compile`" in Texts("en")("help.body", command="/vllm-digest")


def test_a_key_in_one_language_only_fails_loudly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import chatbot.slack.i18n as i18n

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "strings.yaml").write_text("only.en:\n  en: Hello\n", encoding="utf-8")
    monkeypatch.setattr(i18n.resources, "files", lambda _package: tmp_path)
    i18n.catalogue.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"only\.en"):
            i18n.catalogue()
    finally:
        monkeypatch.undo()
        i18n.catalogue.cache_clear()
