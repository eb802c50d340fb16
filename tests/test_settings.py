"""Settings: defaults that need nothing installed, and one clear line naming a bad setting."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from chatbot.settings import BUNDLED_DIGESTS, SettingsError, load_settings

ENV_NAMES = (
    "DAILY_CHANNELS",
    "DAILY_CRON",
    "TIMEZONE",
    "LANGUAGE",
    "DIGEST_DIR",
    "DATABASE_URL",
    "DAILY_GRACE",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env
    return monkeypatch


def test_defaults(clean_env: pytest.MonkeyPatch) -> None:
    s = load_settings()
    assert (s.daily_cron, s.timezone, s.language, s.daily_channels) == (
        "30 9 * * 1-5",
        "Asia/Shanghai",
        "zh",
        [],
    )
    assert s.digest_dir == BUNDLED_DIGESTS and s.database_url.startswith("sqlite:///")
    assert s.daily_grace == timedelta(hours=4)


def test_comma_list_and_env_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DAILY_CHANNELS=C1, C2 ,\nLANGUAGE=en\n", encoding="utf-8")
    s = load_settings()
    assert s.daily_channels == ["C1", "C2"] and s.language == "en"


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("TIMEZONE", "Mars/Olympus", "setting TIMEZONE: Value error, unknown time zone"),
        ("DAILY_CRON", "every day", "setting DAILY_CRON: Value error, expected five cron fields"),
        ("LANGUAGE", "fr", "setting LANGUAGE: Input should be 'zh' or 'en'"),
        ("SLACK_BOT_TOKEN", "hello", "setting SLACK_BOT_TOKEN: String should match pattern"),
        ("LOG_FORMAT", "xml", "setting LOG_FORMAT: Input should be 'text' or 'json'"),
        ("METRICS_PORT", "70000", "setting METRICS_PORT: Input should be less than or equal to 65535"),
        ("USAGE_RETENTION", "0d", "setting USAGE_RETENTION: Input should be greater than 0"),
        ("USAGE_RETENTION", "ninety days", "setting USAGE_RETENTION: Input should be a valid timedelta"),
        ("CURATOR_CRON", "weekly", "setting CURATOR_CRON: Value error, expected five cron fields"),
    ],
)
def test_bad_setting_names_itself(clean_env: pytest.MonkeyPatch, name: str, value: str, words: str) -> None:
    clean_env.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert str(info.value).startswith(words)
    assert "\n" not in str(info.value)


def test_cli_fails_at_start_with_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "TIMEZONE": "Nowhere/Land"}
    result = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "list"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "vllm-digest: setting TIMEZONE: Value error, unknown time zone 'Nowhere/Land', e.g. Asia/Shanghai "
        "(got 'Nowhere/Land')"
    ]
