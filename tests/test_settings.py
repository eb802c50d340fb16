"""Settings: defaults that need nothing installed, and one clear line naming a bad setting."""

from __future__ import annotations

import calendar
import datetime as dt
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatbot.settings import BUNDLED_DIGESTS, SettingsError, cron_can_fire, load_settings
from tests.slackrequests import wait_ready

ENV_NAMES = (
    "DAILY_CHANNELS",
    "DAILY_CRON",
    "TIMEZONE",
    "LANGUAGE",
    "DIGEST_LANGUAGE",
    "DIGEST_DIR",
    "DATABASE_URL",
    "DAILY_GRACE",
    "GITHUB_TOKEN",
    "GITHUB_API_URL",
    "GITHUB_REFRESH",
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
        "auto",
        [],
    )
    assert s.digest_dir == BUNDLED_DIGESTS and s.database_url.startswith("sqlite:///")
    assert s.daily_grace == timedelta(hours=4)
    assert not s.github_enabled and s.github_refresh == timedelta(hours=6)


def test_any_github_setting_turns_the_facts_on(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("GITHUB_REFRESH", "2h")
    s = load_settings()
    assert s.github_enabled and s.github_refresh == timedelta(hours=2)
    assert s.github_api_url == "https://api.github.com" and s.github_token is None


def test_comma_list_and_env_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DAILY_CHANNELS=C1, C2 ,\nLANGUAGE=en\n", encoding="utf-8")
    s = load_settings()
    assert s.daily_channels == ["C1", "C2"] and s.language == "en"


@pytest.mark.parametrize(
    ("env", "language"),
    [
        ({"LANGUAGE": "en_US:en"}, "auto"),  # GNU gettext's, common in shells: not the bot's
        ({"LANGUAGE": "fr"}, "auto"),
        ({"LANGUAGE": "en"}, "en"),  # the old name, read where its value is the bot's
        ({"DIGEST_LANGUAGE": "zh", "LANGUAGE": "en"}, "zh"),
        ({"DIGEST_LANGUAGE": "en", "LANGUAGE": "en_US:en"}, "en"),
    ],
)
def test_digest_language_and_gettext_language(
    clean_env: pytest.MonkeyPatch, env: dict[str, str], language: str
) -> None:
    for name, value in env.items():
        clean_env.setenv(name, value)
    assert load_settings().language == language


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("TIMEZONE", "Mars/Olympus", "setting TIMEZONE: Value error, unknown time zone"),
        ("DAILY_CRON", "every day", "setting DAILY_CRON: Value error, expected five cron fields"),
        ("DIGEST_LANGUAGE", "fr", "setting DIGEST_LANGUAGE: Input should be 'auto', 'zh' or 'en'"),
        ("SLACK_BOT_TOKEN", "hello", "setting SLACK_BOT_TOKEN: String should match pattern"),
        ("LOG_FORMAT", "xml", "setting LOG_FORMAT: Input should be 'text' or 'json'"),
        ("METRICS_PORT", "70000", "setting METRICS_PORT: Input should be less than or equal to 65535"),
        ("USAGE_RETENTION", "0d", "setting USAGE_RETENTION: Input should be greater than 0"),
        ("USAGE_RETENTION", "ninety days", "setting USAGE_RETENTION: Input should be a valid timedelta"),
        ("CURATOR_CRON", "weekly", "setting CURATOR_CRON: Value error, expected five cron fields"),
        ("GITHUB_API_URL", "api.github.com", "setting GITHUB_API_URL: String should match pattern"),
        ("GITHUB_API_URL", "https://", "setting GITHUB_API_URL: Value error, has no host"),
        ("GITHUB_REFRESH", "30s", "setting GITHUB_REFRESH: Input should be a valid timedelta"),
        (
            "GITHUB_REFRESH",
            "PT10S",
            "setting GITHUB_REFRESH: Input should be greater than or equal to 1 minute",
        ),
        ("GITHUB_TOKEN", " ", "setting GITHUB_TOKEN: Value error, is empty"),
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


def cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES and not k.startswith("SLACK_")}
    return subprocess.run(
        [sys.executable, "-m", "chatbot.cli", *args],
        capture_output=True,
        text=True,
        env={**clean, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), **env},
        cwd=cwd,
        timeout=60,
    )


TOKEN = "xoxa-111-222-abcdefHidden42"


@pytest.mark.parametrize(
    ("env", "words"),
    [
        (
            {"DATABASE_URL": "mysql://bot:pw-Hidden42@db/x"},
            "setting DATABASE_URL: Value error, unsupported scheme",
        ),
        ({"DATABASE_URL": "garbage"}, "setting DATABASE_URL: Value error, expected sqlite:///"),
        (
            {"DATABASE_URL": "postgresql://bot:pw-Hidden42@db/x"},
            "setting DATABASE_URL: Value error, unsupported scheme 'postgresql' (use postgresql+psycopg://)",
        ),
        (
            {"DIGEST_DIR": "/no/such/folder"},
            "setting DIGEST_DIR: Value error, folder /no/such/folder does not exist",
        ),
        ({"DIGEST_DIR": "/etc/hostname"}, "setting DIGEST_DIR: Value error, /etc/hostname is a file"),
        ({"SLACK_SIGNING_SECRET": ""}, "setting SLACK_SIGNING_SECRET: Value error, is empty"),
        ({"SLACK_SIGNING_SECRET": "   "}, "setting SLACK_SIGNING_SECRET: Value error, is empty"),
        ({"DAILY_CRON": "30 9 31 2 *"}, "setting DAILY_CRON: Value error, this schedule never fires"),
        ({"DAILY_CRON": "0 0 30 2 1-5"}, "setting DAILY_CRON: Value error, this schedule never fires"),
        ({"DAILY_CRON": "61 * * * *"}, "setting DAILY_CRON: Value error, minute 61 is not in 0-59"),
        ({"DAILY_CRON": "0 9 * * 1-8"}, "setting DAILY_CRON: Value error, day of week 8 is not in 0-7"),
        ({"CURATOR_CRON": "0 24 * * 1"}, "setting CURATOR_CRON: Value error, hour 24 is not in 0-23"),
        ({"DAILY_CRON": "5-3 9 * * *"}, "setting DAILY_CRON: Value error, minute 5-3 runs backwards"),
        ({"SLACK_BOT_TOKEN": TOKEN}, "setting SLACK_BOT_TOKEN: String should match pattern"),
        ({"SLACK_APP_TOKEN": TOKEN}, "setting SLACK_APP_TOKEN: String should match pattern"),
    ],
)
def test_bad_settings_are_one_line_exit_2_and_never_show_a_secret(
    tmp_path: Path, env: dict[str, str], words: str
) -> None:
    for command in (["list"], ["serve", "--port", "0"]):
        result = cli(command, tmp_path, **env)
        assert result.returncode == 2, result
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"vllm-digest: {words}"), lines
        assert "Hidden42" not in result.stderr and "111-222" not in result.stderr


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["post-today"], ["db", "upgrade"]])
def test_a_bad_schedule_is_found_before_the_database_is_created(tmp_path: Path, command: list[str]) -> None:
    database = tmp_path / "state" / "bot.db"
    result = cli(
        command,
        tmp_path,
        DAILY_CRON="61 * * * *",
        DATABASE_URL=f"sqlite:///{database}",
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET="s3cr3t",
        DAILY_CHANNELS="C0DAILY",
    )
    assert result.returncode == 2, result
    assert result.stderr.strip().splitlines() == [
        "vllm-digest: setting DAILY_CRON: Value error, minute 61 is not in 0-59 (got '61 * * * *')"
    ]
    assert not database.parent.exists()


def test_a_dot_env_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"LANGUAGE=en\nSLACK_BOT_TOKEN=xoxb-\xff\xfeSECRET\n")
    result = cli(["list"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "vllm-digest: settings file .env:2: not UTF-8 text (byte 0xff); save it as UTF-8"
    ]


def test_a_valid_cron_with_a_leap_day_is_accepted(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("DAILY_CRON", "30 9 29 2 *")
    assert load_settings().daily_cron == "30 9 29 2 *"


def test_serve_on_a_port_in_use_is_one_line_and_port_0_binds_a_free_one(tmp_path: Path) -> None:
    import socket

    from tests.fakeslack import FakeSlack

    with FakeSlack() as fake, socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        env = {
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": "s3cr3t",
            "SLACK_API_URL": fake.api_url,
            "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
        }
        for args, extra, words in (
            (["serve"], {"PORT": port}, f"vllm-digest: setting PORT: {port}: cannot listen"),
            (["serve", "--port", port], {}, f"vllm-digest: --port {port}: cannot listen"),
        ):
            result = cli(args, tmp_path, **env, **extra)
            assert result.returncode == 2
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith(words), result.stderr
        served = subprocess.Popen(
            [sys.executable, "-m", "chatbot.cli", "serve", "--port", "0"],
            env={
                **os.environ,
                **env,
                "PORT": port,
                "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
            },
            cwd=tmp_path,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert served.stderr is not None
            line = next(line for line in served.stderr if "HTTP on port" in line)
            bound = int(line.split("HTTP on port ")[1].split(",")[0])
            assert bound not in (0, int(port))
            import httpx

            assert httpx.get(f"http://127.0.0.1:{bound}/livez").json() == {"ok": True}
            ready = wait_ready(f"http://127.0.0.1:{bound}")
            assert ready.json() == {"ok": True, "library": "ok", "store": "ok"}
        finally:
            served.terminate()
            served.wait(timeout=15)


def test_cache_dir_defaults_to_the_xdg_cache_and_off_turns_the_snapshot_off(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.delenv("CACHE_DIR", raising=False)
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert load_settings().cache_dir == tmp_path / "xdg" / "vllm-digest"
    for off in ("off", "", " OFF "):
        clean_env.setenv("CACHE_DIR", off)
        assert load_settings().cache_dir is None
    clean_env.setenv("CACHE_DIR", str(tmp_path / "mine"))
    assert load_settings().cache_dir == tmp_path / "mine"


@pytest.mark.parametrize(
    ("dotenv", "line"),
    [
        # python-dotenv skipped these lines with a warning: the setting kept its default.
        (b"LANGUAGE=en\nthis is not a setting\n", ".env:2: not a NAME=value line"),
        (b'LANGUAGE=en\nTIMEZONE="UTC\nLOG_FORMAT=json\n', ".env:2: not a NAME=value line"),
        # A misspelt name was ignored (extra="ignore"): the bot started without it.
        (
            b"SLACK_BOT_TOKN=xoxb-1\n",
            ".env:1: SLACK_BOT_TOKN: unknown setting, did you mean SLACK_BOT_TOKEN?",
        ),
        (
            b"\xef\xbb\xbf# comment\r\nlanguag=en\r\n",
            ".env:2: languag: unknown setting, did you mean LANGUAGE?",
        ),
    ],
)
def test_a_dot_env_line_the_bot_cannot_use_is_one_line_at_its_line(
    tmp_path: Path, dotenv: bytes, line: str
) -> None:
    (tmp_path / ".env").write_bytes(dotenv)
    for command in (["query", "compile"], ["serve", "--port", "0"]):
        result = cli(command, tmp_path)
        assert result.returncode == 2, result
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"vllm-digest: settings file {line}"), lines


def test_other_names_in_dot_env_and_the_environment_are_left_alone(tmp_path: Path) -> None:
    """The .env is shared with docker compose (POSTGRES_PASSWORD); a BOM and CRLF are fine."""
    (tmp_path / ".env").write_bytes(
        b"\xef\xbb\xbfPOSTGRES_PASSWORD=x\r\nLANGUAGE=en\r\nexport TIMEZONE=UTC\r\n"
    )
    result = cli(["today", "--date", "2026-08-03"], tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/t.db")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("console 2026-08-03: ")


def test_a_misspelt_environment_variable_is_one_line(tmp_path: Path) -> None:
    result = cli(["query", "compile"], tmp_path, SLACK_SIGNING_SECRT="s3cret")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "vllm-digest: environment variable SLACK_SIGNING_SECRT: unknown setting, did you mean SLACK_SIGNING_SECRET?"
    ]


@pytest.mark.parametrize(
    ("env", "words"),
    [
        # Path("") is the current folder: the bot read whatever digests were there.
        ({"DIGEST_DIR": ""}, "setting DIGEST_DIR: Value error, is empty"),
        ({"DIGEST_DIR": "  "}, "setting DIGEST_DIR: Value error, is empty"),
        # These passed the ^https?:// pattern and failed at the first call (the console: a traceback).
        ({"LLM_BASE_URL": "http://[::1"}, "setting LLM_BASE_URL: Value error, is not a valid URL"),
        ({"LLM_BASE_URL": "http://"}, "setting LLM_BASE_URL: Value error, has no host"),
        ({"LLM_BASE_URL": "http://vllm:80000/v1"}, "setting LLM_BASE_URL: Value error, is not a valid URL"),
        ({"SLACK_API_URL": "http://slack .com/api/"}, "setting SLACK_API_URL: Value error, has a space"),
        ({"SLACK_API_URL": "https://:443/api/"}, "setting SLACK_API_URL: Value error, has no host"),
        ({"EMBEDDINGS_MODEL": "bge-m3"}, "setting EMBEDDINGS_MODEL: Value error, needs LLM_BASE_URL"),
    ],
)
def test_empty_folders_and_malformed_urls_are_one_line(
    tmp_path: Path, env: dict[str, str], words: str
) -> None:
    for command in (["console"], ["query", "compile"]):
        result = cli(command, tmp_path, **env)
        assert result.returncode == 2, result
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"vllm-digest: {words}"), lines


def test_daily_grace_takes_the_same_spans_as_usage_retention(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("DAILY_GRACE", "2h")
    clean_env.setenv("USAGE_RETENTION", "2w")
    s = load_settings()
    assert (s.daily_grace, s.usage_retention) == (timedelta(hours=2), timedelta(weeks=2))


def test_serve_without_a_token_names_it_before_making_the_database(tmp_path: Path) -> None:
    """A first start without credentials migrated a fresh database first: Alembic's log lines
    came before the one line, and a database file was left behind."""
    result = cli(["serve", "--port", "0"], tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/fresh.db")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "vllm-digest: setting SLACK_BOT_TOKEN: required to talk to Slack (xoxb-…)"
    ]
    assert not (tmp_path / "fresh.db").exists()


@pytest.mark.parametrize(
    ("env", "words"),
    [
        # int() of the count overflowed timedelta: an OverflowError traceback at start.
        ({"USAGE_RETENTION": "9999999999d"}, "setting USAGE_RETENTION: Value error, 9999999999d is too long"),
        ({"DAILY_GRACE": "99999999999w"}, "setting DAILY_GRACE: Value error, 99999999999w is too long"),
        # Accepted, then every prune (now - retention) failed with "date value out of range".
        ({"USAGE_RETENTION": "999999d"}, "setting USAGE_RETENTION: Value error, 999999d is too long"),
        ({"USAGE_RETENTION": "P999999D"}, "setting USAGE_RETENTION: Input should be less than or equal to"),
    ],
)
def test_spans_too_long_for_a_date_are_one_line(tmp_path: Path, env: dict[str, str], words: str) -> None:
    result = cli(["query", "compile"], tmp_path, **env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"vllm-digest: {words}"), lines


@pytest.mark.parametrize(
    ("since", "words"),
    [
        ("9999999999d", "9999999999d is too long"),  # was an OverflowError traceback
        ("999999d", "999999d is too long"),  # was "date value out of range", a traceback
        ("2999-01-01", "2999-01-01 is after today"),  # was an empty report of a window ending before it began
    ],
)
def test_stats_since_out_of_range_is_one_line(tmp_path: Path, since: str, words: str) -> None:
    result = cli(["stats", "--since", since], tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/s.db")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"vllm-digest stats: --since: {words}"), lines


@given(st.integers(1, 31), st.integers(1, 12), st.integers(0, 7))
def test_a_schedule_fires_when_some_date_has_its_day_month_and_weekday(
    day: int, month: int, weekday: int
) -> None:
    """croniter's answer against the calendar itself: 28 years hold every weekday of every date."""
    python_weekday = (weekday - 1) % 7  # crontab: Sunday is 0 and 7; Python: Monday is 0
    some_date = any(
        dt.date(year, month, day).weekday() == python_weekday
        for year in range(2024, 2052)
        if day <= calendar.monthrange(year, month)[1]
    )
    assert cron_can_fire(f"30 9 {day} {month} {weekday}") == some_date
