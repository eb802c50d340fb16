"""Settings from the environment or `.env` (pydantic-settings), read once at start by the wiring.
A bad value fails at start with one line naming the setting, never showing a secret (tokens not
at all, URLs with their password masked)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import io
import os
import re
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

_PACKAGE = Path(__file__).resolve().parent
# Installed: the digest ships inside the package (chatbot/digests, from the repo's digests/);
# in a checkout (editable install) it is the curator-facing digests/ at the top of the repo.
BUNDLED_DIGESTS = next(
    (p for p in (_PACKAGE / "digests", _PACKAGE.parent / "digests") if p.is_dir()), _PACKAGE / "digests"
)
# Settings whose values are never shown in an error.
SECRETS = {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "LLM_API_KEY", "GITHUB_TOKEN"}
# The settings that turn on GitHub's live PR facts: without any of them the bot reads the digest alone.
GITHUB_SETTINGS = ("github_token", "github_api_url", "github_refresh")
# DATABASE_URL schemes the store supports, and the module each needs.
DATABASE_DRIVERS = {"sqlite": "sqlite3", "sqlite+pysqlite": "sqlite3", "postgresql+psycopg": "psycopg"}
_CRON_FIELD = r"[\d*/,\-A-Za-z?]+"
CRON_RE = re.compile(rf"^{_CRON_FIELD}(\s+{_CRON_FIELD}){{4}}$")
SPAN_RE = re.compile(r"^\s*(\d+)\s*([hdw])\s*$", re.IGNORECASE)
SPAN_UNITS = {"h": "hours", "d": "days", "w": "weeks"}
# The longest span a setting takes: now minus it is still a date (999999d was an OverflowError
# traceback at start, or at the first prune).
LONGEST_SPAN = timedelta(days=36500)
ENV_FILE = ".env"
# How alike a name must be to a setting's to be taken for a misspelling of it (SLACK_BOT_TOKN).
TYPO_CUTOFF = 0.9


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/vllm-digest, else ~/.cache/vllm-digest."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vllm-digest"


BOT_LANGUAGES = ("auto", "zh", "en")


class SettingsError(ValueError):
    """A missing or malformed setting; the message is one line naming it."""


class Settings(BaseSettings):
    """Every setting of the bot, by its environment name."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    slack_bot_token: str | None = Field(default=None, pattern=r"^xox[bp]-")
    slack_signing_secret: str | None = None
    slack_app_token: str | None = Field(default=None, pattern=r"^xapp-")
    slack_api_url: str = Field(default="https://slack.com/api/", pattern=r"^https?://")
    database_url: str = "sqlite:///vllm-digest.db"
    digest_dir: Path = BUNDLED_DIGESTS
    # Where `serve` keeps the snapshot of the parsed digests (a fast restart); empty or `off`: none.
    cache_dir: Path | None = Field(default_factory=default_cache_dir)
    daily_channels: Annotated[list[str], NoDecode] = Field(default_factory=list)
    daily_cron: str = "30 9 * * 1-5"
    daily_grace: timedelta = Field(default=timedelta(hours=4), ge=timedelta(0), le=LONGEST_SPAN)
    # How often every replica re-reads the subscriptions (seconds; at most a minute).
    reconcile_seconds: float = Field(default=60.0, gt=0, le=60)
    admin_users: Annotated[list[str], NoDecode] = Field(default_factory=list)
    timezone: str = "Asia/Shanghai"
    # DIGEST_LANGUAGE (auto: each person's Slack locale); LANGUAGE, GNU gettext's variable, is read
    # only when it holds one of these values (`en_US:en` is gettext's, not the bot's).
    language: Literal["auto", "zh", "en"] = Field(default="auto", validation_alias="digest_language")
    gettext_language: str | None = Field(default=None, validation_alias="language", exclude=True)
    # Which replies in the bot's threads it answers: questions/requests/mentions, mentions only, all.
    followups: Literal["questions", "mentions", "all"] = "questions"
    # The address `serve` listens on (Slack's requests in HTTP mode, the probes and /metrics):
    # every interface by default, as a container's port mapping needs; 127.0.0.1 keeps it local.
    host: str = Field(default="0.0.0.0", min_length=1)
    port: int = Field(default=3000, ge=0, le=65535)
    slack_timeout: float = Field(default=15.0, gt=0, le=300)
    log_format: Literal["text", "json"] = "text"
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    usage_retention: timedelta = Field(default=timedelta(days=90), gt=timedelta(0), le=LONGEST_SPAN)
    usage_salt: str | None = None
    curator_channel: str | None = None
    curator_cron: str = "0 10 * * 1"
    # Optional model server (OpenAI-compatible, e.g. vLLM): unset → extractive answers only.
    llm_base_url: str | None = Field(default=None, pattern=r"^https?://")
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(default=20.0, gt=0, le=600)
    # Live PR facts from GitHub's REST API (GitHub Enterprise: its /api/v3 URL); see docs/github.md.
    github_token: SecretStr | None = None
    github_api_url: str = Field(default="https://api.github.com", pattern=r"^https?://")
    github_refresh: timedelta = Field(default=timedelta(hours=6), ge=timedelta(minutes=1), le=LONGEST_SPAN)
    # Optional semantic search on the same server's /v1/embeddings: unset → lexical search only.
    embeddings_model: str | None = None
    embeddings_timeout: float = Field(default=0.5, gt=0, le=10)
    embeddings_floor: float = Field(default=0.5, gt=0, le=1)

    @field_validator("daily_channels", "admin_users", mode="before")
    @classmethod
    def _comma_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [c.strip() for c in value.split(",") if c.strip()]
        return value

    @field_validator("daily_cron", "curator_cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        value = value.strip()
        if not CRON_RE.match(value):
            raise ValueError("expected five cron fields, e.g. '30 9 * * 1-5'")
        out_of_range = cron_out_of_range(value)
        if out_of_range:
            raise ValueError(out_of_range)
        if not cron_can_fire(value):
            raise ValueError("this schedule never fires (no day matches its day, month and weekday)")
        return value

    @field_validator("slack_signing_secret", "slack_bot_token", "slack_app_token", "github_token")
    @classmethod
    def _not_blank(cls, value: str | SecretStr | None) -> str | SecretStr | None:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if text is not None and not text.strip():
            raise ValueError("is empty; set it or leave it out")
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        scheme = value.partition("://")[0].lower() if "://" in value else ""
        if not scheme:
            raise ValueError("expected sqlite:///path.db or postgresql+psycopg://user:password@host/db")
        module = DATABASE_DRIVERS.get(scheme)
        if module is None:
            hint = " (use postgresql+psycopg://)" if scheme.startswith(("postgres", "psql")) else ""
            raise ValueError(
                f"unsupported scheme {scheme!r}{hint}; expected sqlite:/// or postgresql+psycopg://"
            )
        if importlib.util.find_spec(module) is None:
            raise ValueError("PostgreSQL needs the postgres extra: pip install 'vllm-digest[postgres]'")
        return value

    @field_validator("digest_dir")
    @classmethod
    def _digest_dir(cls, value: Path) -> Path:
        if value.is_symlink() and not value.exists():
            raise ValueError(f"{value} is a broken symlink or a symlink loop")
        if not value.exists():
            raise ValueError(f"folder {value} does not exist")
        if not value.is_dir():
            raise ValueError(f"{value} is a file; DIGEST_DIR is the folder of digest files")
        if not os.access(value, os.R_OK | os.X_OK):
            raise ValueError(f"folder {value} is not readable")
        return value

    @model_validator(mode="after")
    def _gettext_language(self) -> Settings:
        """LANGUAGE stands for DIGEST_LANGUAGE only when that is not set and LANGUAGE holds one of
        the bot's values: a shell's `LANGUAGE=en_US:en` (GNU gettext's) is none of the bot's."""
        fallback = self.gettext_language
        if "language" not in self.model_fields_set and fallback in BOT_LANGUAGES:
            self.language = fallback  # type: ignore[assignment]
        return self

    @field_validator("cache_dir", mode="before")
    @classmethod
    def _cache_dir(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in ("", "off", "none"):
            return None
        return value

    @field_validator("digest_dir", mode="before")
    @classmethod
    def _digest_dir_given(cls, value: object) -> object:
        """An empty DIGEST_DIR is not the current folder (what Path('') means)."""
        if isinstance(value, str) and not value.strip():
            raise ValueError("is empty; set it to the folder of digest files or leave it out")
        return value

    @field_validator("usage_retention", "daily_grace", "github_refresh", mode="before")
    @classmethod
    def _span(cls, value: object) -> object:
        """`90d`, `12w`, `36h` besides pydantic's ISO 8601 (`P90D`) and seconds."""
        if isinstance(value, str):
            span = parse_span(value)
            if span is not None:
                return span
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}, e.g. Asia/Shanghai") from None
        return value

    @field_validator("embeddings_model")
    @classmethod
    def _embeddings_need_a_server(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not info.data.get("llm_base_url"):
            raise ValueError("needs LLM_BASE_URL, the model server that serves it on /v1/embeddings")
        return value

    @field_validator("slack_api_url", "llm_base_url", "github_api_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        """A URL the HTTP clients can open: a host, a numeric port, no spaces (`http://`,
        `http://[::1` and `http://my host/` passed the pattern and failed at the first call)."""
        if value is not None:
            check_url(value)
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        return value if value.endswith("/") else value + "/"

    @property
    def github_enabled(self) -> bool:
        """Only with a GITHUB_* setting does the bot fetch or read PR facts."""
        return any(name in self.model_fields_set for name in GITHUB_SETTINGS)

    def secret(self, name: Literal["llm_api_key", "github_token"]) -> str | None:
        value: SecretStr | None = getattr(self, name)
        return value.get_secret_value() if value is not None else None

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def channel_language(self) -> Literal["zh", "en"]:
        """The language of what a whole channel reads and of anyone whose locale is unknown:
        DIGEST_LANGUAGE when forced, under `auto` the digest's own (zh)."""
        return "zh" if self.language == "auto" else self.language


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, or SettingsError naming the first bad one."""
    try:
        if overrides.get("_env_file", ENV_FILE) == ENV_FILE:
            check_env_file(Path(ENV_FILE))
        check_names(os.environ, "environment variable {name}")
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]).upper() if first["loc"] else "settings"
        raise SettingsError(
            f"setting {name}: {first['msg']}{shown_value(name, first.get('input'))}"
        ) from None
    except UnicodeDecodeError as exc:
        line = bytes(exc.object[: exc.start]).count(b"\n") + 1
        raise SettingsError(
            f"settings file .env:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); save it as UTF-8"
        ) from None
    except OSError as exc:
        raise SettingsError(f"settings file .env: cannot read it ({exc.strerror})") from None


def parse_span(value: str) -> timedelta | None:
    """`90d`, `12w`, `36h` as a timedelta; None when not written so; ValueError beyond LONGEST_SPAN."""
    match = SPAN_RE.match(value)
    if match is None:
        return None
    count, unit = int(match.group(1)), SPAN_UNITS[match.group(2).lower()]
    hours = count * {"hours": 1, "days": 24, "weeks": 168}[unit]
    if hours > LONGEST_SPAN / timedelta(hours=1):
        raise ValueError(f"{value.strip()} is too long; at most {LONGEST_SPAN.days}d")
    return timedelta(**{unit: count})


def check_url(value: str) -> None:
    """ValueError unless `value` is an http(s) URL with a host and a valid port."""
    if any(c.isspace() for c in value):
        raise ValueError("has a space in it; expected a URL such as http://host:8000/v1")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise ValueError(f"is not a valid URL ({exc})") from None
    if not parts.hostname:
        raise ValueError("has no host; expected a URL such as http://host:8000/v1")


def check_env_file(path: Path) -> None:
    """SettingsError for a misspelt name or a line of `.env` python-dotenv cannot read (it skips
    it with a warning, so the setting would silently keep its default)."""
    if not path.is_file():
        return
    from dotenv.parser import parse_stream

    for binding in parse_stream(io.StringIO(path.read_bytes().decode("utf-8-sig"))):
        where = f"settings file {path}:{binding.original.line}"
        if binding.error:
            raise SettingsError(
                f"{where}: not a NAME=value line (an unclosed quote, or a space in the name?)"
            )
        if binding.key is not None:
            check_names([binding.key], where + ": {name}")


def check_names(names: Iterable[str], where: str) -> None:
    """SettingsError for a name that is not a setting but a typo away from one (SLACK_BOT_TOKN);
    other names (PATH, POSTGRES_PASSWORD for compose) are none of the bot's business."""
    import difflib

    known = [str(field.validation_alias or name).upper() for name, field in Settings.model_fields.items()]
    starts = {name[:2] for name in known}  # a misspelling keeps its start: PATH, HOME cost nothing
    for name in names:
        upper = name.upper()
        if upper in known or upper[:2] not in starts:
            continue
        close = difflib.get_close_matches(upper, known, n=1, cutoff=TYPO_CUTOFF)
        if close:
            raise SettingsError(f"{where.format(name=name)}: unknown setting, did you mean {close[0]}?")


def shown_value(name: str, value: object) -> str:
    """What an error may show of a bad value: nothing of a secret, DATABASE_URL masked."""
    if isinstance(value, dict) or name in SECRETS:
        return ""
    text = str(value)
    if name in ("DATABASE_URL", "LLM_BASE_URL", "GITHUB_API_URL"):
        text = mask_password(text)
    return f" (got {text[:60]!r})"


def mask_password(url: str) -> str:
    """A URL with the password of its user part replaced by ***."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}"


# -- cron ------------------------------------------------------------------------------------

CRON_SEARCH_START = dt.datetime(2024, 1, 1)

# Each crontab field's name and the numbers it may hold (day of week: 0 and 7 are Sunday).
_CRON_FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
)


def cron_out_of_range(expression: str) -> str | None:
    """What is out of range in a five-field crontab (`61 * * * *`: "minute 61 is not in 0-59"), or None."""
    for field, (name, low, high) in zip(expression.split(), _CRON_FIELDS, strict=True):
        for number in re.findall(r"\d+", field.partition("/")[0]):
            if not low <= int(number) <= high:
                return f"{name} {number} is not in {low}-{high}"
        # A range such as `5-3`: cron reads none, croniter would wrap it round.
        for first, last in re.findall(r"(\d+)-(\d+)", field):
            if int(first) > int(last):
                return f"{name} {first}-{last} runs backwards"
    return None


def cron_can_fire(expression: str) -> bool:
    """Whether a crontab matches any real date (`30 9 31 2 *` never does): day of month and day of
    week both, as APScheduler reads it; syntax croniter does not read is the scheduler's to judge."""
    if expression.split()[2:4] == ["*", "*"]:
        return True  # any weekday comes every week; spares a command croniter's import (30 ms)
    from croniter import CroniterBadDateError, CroniterError, croniter

    try:
        # The Gregorian weekday/leap-year pattern repeats within 28 years.
        croniter(expression, CRON_SEARCH_START, day_or=False, max_years_between_matches=28).get_next()
    except CroniterBadDateError:
        return False
    except CroniterError:
        return True
    return True
