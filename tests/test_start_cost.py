"""What `serve` does before it is ready, done the cheaper way, gives what the plain way gives.

The bundled data files are read with libyaml's parser (a tenth of pure-Python PyYAML's CPU, most
of them at start); each module's loader must read every data file exactly as `yaml.safe_load`.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from chatbot import yamlfast
from chatbot.answers import Answerer
from chatbot.bot import Bot
from chatbot.settings import Settings
from chatbot.slack.handlers.followups import FollowUps
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.fakeslack import FakeSlack

ROOT = Path(__file__).resolve().parents[1]
# The modules that read a bundled data file at start, by the data file they read.
READERS = {
    "chatbot/answers/data/addressing.yaml": "chatbot.answers.addressing",
    "chatbot/answers/data/answer_slots.yaml": "chatbot.answers.slots",
    "chatbot/answers/data/answer_words.yaml": "chatbot.answers.composer",
    "chatbot/answers/data/followup_intents.yaml": "chatbot.answers.intents",
    "chatbot/answers/data/followup_terms.yaml": "chatbot.answers.retrieval",
    "chatbot/answers/data/kind_priors.yaml": "chatbot.answers.candidates",
    "chatbot/daily/data/schedule.yaml": "chatbot.daily.subscription",
    "chatbot/slack/data/strings.yaml": "chatbot.slack.i18n",
    "chatbot/digest/data/note_labels.yaml": "chatbot.digest.note_labels",
    "chatbot/digest/data/people.yaml": "chatbot.digest.people",
    "chatbot/search/data/glossary.yaml": "chatbot.search.glossary",
    "chatbot/search/data/plain_words.yaml": "chatbot.search.descriptions",
    "chatbot/search/data/vllm.yaml": "chatbot.search.glossary",
}
# Shipped beside the data they describe, read by a bench and a test, never at start.
NOT_READ_AT_START = {"chatbot/search/data/vllm_sources.yaml": "bench/vocabulary.py"}


def test_every_bundled_data_file_has_a_reader_here() -> None:
    shipped = {str(p.relative_to(ROOT)) for p in (ROOT / "chatbot").rglob("data/*.yaml")}
    assert shipped == set(READERS) | set(NOT_READ_AT_START)


@pytest.mark.parametrize("data_file", sorted(READERS))
def test_a_data_file_reads_as_safe_load_reads_it(data_file: str) -> None:
    module = importlib.import_module(READERS[data_file])
    source = (ROOT / data_file).read_text(encoding="utf-8")
    # The module reads it through the one shared loader, libyaml's where PyYAML has it.
    assert (
        getattr(module, "load_yaml", None) is yamlfast.load_yaml
        or getattr(module, "LOADER", None) is yamlfast.LOADER
    )
    assert yamlfast.LOADER is getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    assert yamlfast.load_yaml(source) == yaml.safe_load(source)


def settings_for(fake_slack: FakeSlack, digests: Path = ROOT / "digests") -> Settings:
    return Settings(
        _env_file=None,
        slack_bot_token="xoxb-test",
        slack_signing_secret="secret",
        slack_api_url=fake_slack.api_url,
        digest_dir=digests,
    )


def test_the_bolt_app_keeps_the_name_bolt_read_off_its_caller(fake_slack: FakeSlack) -> None:
    """Named up front: Bolt's own way (`inspect.stack()`) cost 30 ms of the start."""
    bot = build(settings_for(fake_slack), load=False)
    try:
        assert bot.app.name == "app.py"  # the file that calls App(), as Bolt derived it
    finally:
        bot.close()


def test_a_sqlite_store_writes_without_loading_the_postgresql_dialect(tmp_path: Path) -> None:
    """Insert-ignore on every table that uses it, in a fresh interpreter on a database at head (a
    restart): the PostgreSQL dialect (a tenth of SQLAlchemy's import) stays unloaded on SQLite."""
    probe = (
        "import sys, datetime as dt\n"
        "from chatbot.store import SqlStore, SubscriptionStore\n"
        "from chatbot.usage import FeedbackTarget, UsageStore\n"
        "store = SqlStore.open(sys.argv[1])\n"
        "print(store.mark_handled('k'), store.mark_handled('k'))\n"
        "now = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)\n"
        "print(SubscriptionStore(store.engine).note_entries({'e1'}, now=now) is not None)\n"
        "print(UsageStore(store.engine).claim_report('2026-W36', 'C1', 'me', now))\n"
        "print(any(m.startswith('sqlalchemy.dialects.postgresql') for m in sys.modules))\n"
    )
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    SqlStore.open(url).close()  # migrated here: Alembic's own PostgreSQL support loads it
    run = subprocess.run(
        [sys.executable, "-c", probe, url], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert run.stdout.splitlines() == ["True False", "True", "True", "False"]


@pytest.fixture
def digests_with_glossary(tmp_path: Path) -> Path:
    """The bundled digests and a curator's glossary file naming a concept of their own."""
    folder = tmp_path / "digests"
    shutil.copytree(ROOT / "digests", folder)
    (folder / "team.glossary.yaml").write_text(
        "concepts:\n  - {id: our-cluster, label: our cluster, en: [dragon cluster], zh: [龙集群]}\n",
        encoding="utf-8",
    )
    return folder


def answerer_of(bot: Bot) -> Answerer:
    assert isinstance(bot.follow_up, FollowUps)
    return bot.follow_up.answerer


def test_serve_reads_the_answerers_data_once_the_digests_are_in(
    fake_slack: FakeSlack, digests_with_glossary: Path
) -> None:
    """Not needed to answer a command, so not read before ready: the folder's glossary (and the
    phrasings) are read right after the load, on the loading thread, tag index included."""
    bot = build(settings_for(fake_slack, digests_with_glossary), load=False)
    try:
        answerer = answerer_of(bot)
        assert answerer._glossary is None and bot.after_load == [answerer.warm_up]
        bot.start().join(timeout=60)
        assert answerer._glossary is not None and "our-cluster" in answerer._glossary.concepts
        assert answerer._tag_index is not None and len(answerer._tag_index.ordered) == len(bot.library)
    finally:
        bot.close()


def test_a_question_before_the_warm_up_reads_the_folders_glossary(
    fake_slack: FakeSlack, digests_with_glossary: Path
) -> None:
    bot = build(settings_for(fake_slack, digests_with_glossary), load=False)
    try:
        bot.live.load()  # loaded, the warm-up not run yet: the first question reads what it needs
        entry = bot.library.entries[0]
        answer = answerer_of(bot).answer(entry, "跟龙集群有关吗？")
        assert "our-cluster" in answerer_of(bot).glossary.concepts and answer.text
    finally:
        bot.close()


def test_a_build_that_loads_at_once_warms_the_answerer_at_once(
    fake_slack: FakeSlack, digests_with_glossary: Path
) -> None:
    """The console and tests build loaded: nothing is left for later there."""
    bot = build(settings_for(fake_slack, digests_with_glossary))
    try:
        answerer = answerer_of(bot)
        assert bot.after_load == [] and answerer._glossary is not None
        assert "our-cluster" in answerer._glossary.concepts
    finally:
        bot.close()
