"""Settings from the environment or `.env` (pydantic-settings), read once at start.

Only the wiring (`chatbot.cli`) reads settings; everything else gets what it needs passed in.
A bad value fails at start with one line naming the setting.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

BUNDLED_DIGESTS = Path(__file__).resolve().parent.parent / "digests"
_CRON_FIELD = r"[\d*/,\-A-Za-z?]+"
CRON_RE = re.compile(rf"^{_CRON_FIELD}(\s+{_CRON_FIELD}){{4}}$")
SPAN_RE = re.compile(r"^\s*(\d+)\s*([hdw])\s*$", re.IGNORECASE)
SPAN_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


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
    daily_channels: Annotated[list[str], NoDecode] = Field(default_factory=list)
    daily_cron: str = "30 9 * * 1-5"
    daily_grace: timedelta = timedelta(hours=4)
    # How often every replica re-reads the subscriptions (seconds; at most a minute).
    reconcile_seconds: float = Field(default=60.0, gt=0, le=60)
    admin_users: Annotated[list[str], NoDecode] = Field(default_factory=list)
    timezone: str = "Asia/Shanghai"
    language: Literal["zh", "en"] = "zh"
    port: int = Field(default=3000, ge=1, le=65535)
    log_format: Literal["text", "json"] = "text"
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    usage_retention: timedelta = Field(default=timedelta(days=90), gt=timedelta(0))
    usage_salt: str | None = None
    curator_channel: str | None = None
    curator_cron: str = "0 10 * * 1"
    # Optional model server (OpenAI-compatible, e.g. vLLM): unset → extractive answers only.
    llm_base_url: str | None = Field(default=None, pattern=r"^https?://")
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(default=20.0, gt=0, le=600)

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
        return value

    @field_validator("usage_retention", mode="before")
    @classmethod
    def _span(cls, value: object) -> object:
        """`90d`, `12w`, `36h` besides pydantic's ISO 8601 (`P90D`) and seconds."""
        if isinstance(value, str):
            match = SPAN_RE.match(value)
            if match:
                return timedelta(**{SPAN_UNITS[match.group(2).lower()]: int(match.group(1))})
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}, e.g. Asia/Shanghai") from None
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        return value if value.endswith("/") else value + "/"

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, or SettingsError naming the first bad one."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]).upper() if first["loc"] else "settings"
        value = first.get("input")
        shown = "" if isinstance(value, dict) else f" (got {str(value)[:60]!r})"
        raise SettingsError(f"setting {name}: {first['msg']}{shown}") from None
