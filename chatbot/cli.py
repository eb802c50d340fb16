"""`vllm-digest` command line: a thin adapter over the core and the wiring.

Imports are per command so that `query` and `ask` start without Slack, SQLAlchemy or the
scheduler.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from chatbot.serve import cmd_serve, database_error
from chatbot.settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from chatbot.daily.subscription import Subscription
    from chatbot.digest import Entry, FactsLookup
    from chatbot.store import SqlStore


@contextlib.contextmanager
def _opened(settings: Settings, *, upgrade: bool = True) -> Iterator[SqlStore]:
    """The store at DATABASE_URL for one command, closed after it."""
    from chatbot.store import SqlStore

    store = SqlStore.open(settings.database_url, upgrade=upgrade)
    try:
        yield store
    finally:
        store.close()


def _library(settings: Settings, path: str | None = None):  # type: ignore[no-untyped-def]
    from chatbot.digest import Library

    return Library.load(Path(path) if path else settings.digest_dir)


def _print_explanations(library: Iterable[Entry], as_json: bool = False) -> None:
    """Per entry, what readers will get of each part of its note, and hints for the missing ones."""
    from chatbot.digest import explain

    explanations = [explain(entry) for entry in library]
    if as_json:
        print(json.dumps([e.to_json() for e in explanations], ensure_ascii=False, indent=2))
        return
    for explanation in explanations:
        print("\n".join(explanation.lines()))


def cmd_validate(args: argparse.Namespace, settings: Settings) -> int:
    """Every problem with file:line; exit 1 when any is an error (warnings alone exit 0)."""
    library = _library(settings, args.path)
    for problem in library.problems:
        print(problem)
    if args.explain:
        _print_explanations(library)
    errors = len(library.errors)
    warnings = len(library.problems) - errors
    print(f"{len(library)} entries, {errors} errors, {warnings} warnings", file=sys.stderr)
    return 1 if errors else 0


def _stored_facts(settings: Settings) -> FactsLookup:
    """GitHub's facts as last fetched (none without GITHUB_* settings: the store is not opened)."""
    from chatbot.digest import facts_lookup, no_facts

    if not settings.github_enabled:
        return no_facts
    from chatbot.github import load_facts
    from chatbot.store.prfacts import PrFactsStore

    with _opened(settings) as store:
        return facts_lookup(load_facts(PrFactsStore(store.engine)))


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    """A thread follow-up answer from the entry; unknown entry exits 1 with one line."""
    from chatbot.answers import Answerer
    from chatbot.search import load_glossary

    library = _library(settings)
    entry = library.get(args.entry)
    if entry is None:
        print(
            f"vllm-digest ask: no entry {args.entry!r} (use an id, PR number, #N or PR URL)", file=sys.stderr
        )
        return 1
    question = " ".join(args.question)
    # The digest folder's glossary files extend the bundled glossary, as for the search.
    answerer = Answerer(library, load_glossary(library.folder), facts=_stored_facts(settings))
    answer = answerer.answer(entry, question)
    model = _model_answer(settings, answerer, entry, question) if args.llm else None
    if args.json:
        payload = {"entry": entry.id, "pr": entry.pr, **answer.to_json()}
        if model is not None:
            payload["model"] = model
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(answer.text)
        if model is not None:
            print(f"\n--- model ({model['status']}) ---\n{model.get('answer') or model.get('reason')}")
    return 0


def _model_answer(settings: Settings, answerer: Any, entry: Any, question: str) -> dict[str, Any]:
    """The model server's answer beside the extractive one: its text, and whether it was grounded."""
    from chatbot.answers.grounding import review
    from chatbot.answers.model_prompt import answer_language, entry_messages
    from chatbot.builders import build_model_client
    from chatbot.llm import ModelError
    from chatbot.llm.client import probe

    client = build_model_client(settings)
    if client is None:
        return {"status": "off", "reason": "LLM_BASE_URL is not set"}
    lang = answer_language(question, settings.channel_language)
    related = answerer.same_topic_entries(entry, limit=3)
    try:
        text = probe(client, entry_messages(entry, question, lang, related)).strip()
    except ModelError as exc:
        return {"status": "failed", "reason": str(exc)}
    problem, details = review(text, [entry], lang)
    if problem == "ungrounded":
        return {"status": "ungrounded", "answer": text, "reason": "not in the entry: " + ", ".join(details)}
    if problem:
        return {"status": "failed", "answer": text, "reason": ", ".join(details)}
    return {"status": "grounded", "answer": text}


def cmd_list(args: argparse.Namespace, settings: Settings) -> int:
    library = _library(settings, args.path)
    if args.explain:
        _print_explanations(library, as_json=args.json)
    elif args.json:
        facts = _stored_facts(settings)
        print(json.dumps([_entry_json(e, facts) for e in library], ensure_ascii=False, indent=2))
    else:
        for entry in library:
            pr = f"#{entry.pr}" if entry.pr else "-"
            print(f"{entry.id}  {pr:>7}  {entry.title}")
    for problem in library.problems:
        print(problem, file=sys.stderr)
    return 0


def _entry_json(entry: Entry, facts: FactsLookup) -> dict[str, Any]:
    """The entry as JSON, with GitHub's facts under `github` when known."""
    data: dict[str, Any] = entry.model_dump(mode="json")
    known = facts(entry)
    if known is not None:
        data["github"] = known.to_json()
    return data


def cmd_schema(args: argparse.Namespace, settings: Settings) -> int:
    from chatbot.digest import json_schema

    print(json_schema())
    return 0


def cmd_console(args: argparse.Namespace, settings: Settings) -> int:
    """The same Bolt handlers in a terminal chat; reads a script from stdin when piped."""
    from chatbot.console import run_console

    return run_console(settings, sys.stdin, sys.stdout)


def _search_index(settings: Settings):  # type: ignore[no-untyped-def]
    """Library + glossary (bundled and DIGEST_DIR extensions) → index; problems go to stderr."""
    from chatbot.heap import build_long_lived
    from chatbot.search import SearchIndex, load_glossary

    library = _library(settings)
    glossary = load_glossary(settings.digest_dir)
    for problem in [*library.problems, *glossary.problems]:
        print(problem, file=sys.stderr)
    return build_long_lived(lambda: SearchIndex.build(library.entries, glossary))


def _searchable(settings: Settings):  # type: ignore[no-untyped-def]
    """The index, with semantic search when EMBEDDINGS_MODEL is set (vectors kept in the store)."""
    index = _search_index(settings)
    if not settings.embeddings_model:
        return index
    from chatbot.builders import build_semantic
    from chatbot.search.semantic import SemanticSearch
    from chatbot.store import SqlStore

    try:
        semantic = build_semantic(settings, SqlStore.open(settings.database_url))
        ready = semantic is not None and semantic.prepare(index.entries)
    except Exception as exc:  # the store failing: the words still answer
        print(f"semantic search off: {exc}", file=sys.stderr)
        return index
    return SemanticSearch(index, semantic) if ready and semantic is not None else index


def cmd_query(args: argparse.Namespace, settings: Settings) -> int:
    """The slash command's search; `--json` is a ranked array, `[]` when nothing matches."""
    query = " ".join(args.topic)
    result = _searchable(settings).search(query, limit=max(args.limit, 0))
    if args.json:
        rows = [
            {"id": h.entry.id, "title": h.entry.title, "pr": h.entry.pr, "url": h.entry.url}
            | {"score": h.score, "matched": h.matched}
            for h in result.hits
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not result.hits:
        print(f"no match for {query!r}, try: {', '.join(result.suggestions)}")
        return 0
    for rank, hit in enumerate(result.hits, start=1):
        pr = f"#{hit.entry.pr}" if hit.entry.pr else "-"
        print(f"{rank}. {hit.entry.title}  ({pr}, score {hit.score:.2f}; matched: {', '.join(hit.matched)})")
        if hit.entry.url:
            print(f"   {hit.entry.url}")
        if hit.entry.why:
            print(f"   {hit.entry.why}")
    if result.total > len(result.hits):
        print(f"({result.total - len(result.hits)} more; use --limit)")
    return 0


def cmd_topics(args: argparse.Namespace, settings: Settings) -> int:
    """Concepts present in the library with their entry counts."""
    topics = _search_index(settings).topics()
    if args.json:
        print(json.dumps([{"topic": t, "entries": n} for t, n in topics], ensure_ascii=False, indent=2))
    else:
        for topic, count in topics:
            print(f"{count:4d}  {topic}")
    return 0


def _iso_date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {value!r}") from None


def _daily_day(args: argparse.Namespace, settings: Settings) -> tuple[str, dt.date]:
    """--channel (default first DAILY_CHANNELS, else "console") and --date (default today in TIMEZONE)."""
    channel = args.channel or (settings.daily_channels[0] if settings.daily_channels else "console")
    day: dt.date = args.date or dt.datetime.now(settings.zone).date()
    return channel, day


def _channel_topics(store: Any, library: Any, channel: str) -> Any:
    """The channel's subscription topics as the picker's filter (None: every topic)."""
    from chatbot.daily import TopicFilter
    from chatbot.daily.topics import entries_on
    from chatbot.search import SearchIndex, load_glossary
    from chatbot.store import SubscriptionStore

    subscription = SubscriptionStore(store.engine).get(channel)
    if subscription is None or not subscription.topics:
        return None
    index = SearchIndex.build(library.entries, load_glossary(library.folder))
    matching = entries_on(subscription.topics, index)
    return TopicFilter(matching, tuple(subscription.topic_labels()), subscription.strict)


def cmd_today(args: argparse.Namespace, settings: Settings) -> int:
    """Which entry the channel gets on the day, and why; posts nothing."""
    from chatbot.daily.jobs import build_daily_poster
    from chatbot.store import DailyPost

    channel, day = _daily_day(args, settings)
    library = _library(settings)
    with _opened(settings) as store:
        topics = _channel_topics(store, library, channel)
        poster = build_daily_poster(
            settings, library, store, None, lambda _channel: topics, facts=_stored_facts(settings)
        )
        pick = poster.plan(channel, day)
    if isinstance(pick, DailyPost):
        entry = library.get(pick.entry_id)
        title = entry.title if entry else "(no longer in the library)"
        print(f"{channel} {day}: already posted {pick.entry_id} {title} (ts {pick.message_ts})")
        return 0
    if pick is None:
        where = f"on {', '.join(topics.labels)} (strict)" if topics else f"in {settings.digest_dir}"
        print(f"{channel} {day}: no entries {where}", file=sys.stderr)
        return 1
    pr = f" #{pick.entry.pr}" if pick.entry.pr else ""
    print(f"{channel} {day}: {pick.entry.id}{pr} {pick.entry.title}")
    print(f"why: {pick.reason}")
    if pick.topics_done:
        print(
            f"note: {channel} has had every entry on its topics ({', '.join(topics.labels if topics else ())})"
        )
    return 0


def cmd_post_today(args: argparse.Namespace, settings: Settings) -> int:
    """Post the day's entry once; exit 0 when it is (or already was) posted."""
    from chatbot.daily.jobs import build_daily_poster

    channel, day = _daily_day(args, settings)
    if not settings.slack_bot_token:
        print("vllm-digest: setting SLACK_BOT_TOKEN: required to post", file=sys.stderr)
        return 2
    library = _library(settings)
    for problem in library.problems:
        print(problem, file=sys.stderr)
    with _opened(settings) as store:
        result = build_daily_poster(settings, library, store, facts=_stored_facts(settings)).run(channel, day)
    print(result.line(), file=sys.stdout if result.ok else sys.stderr)
    return 0 if result.ok else 1


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    """The curator report over the usage tables: gaps, top queries, entries, unanswered questions."""
    from chatbot.usage.report import build_report, parse_since, render_text

    now = dt.datetime.now(dt.UTC)
    try:
        since = parse_since(args.since, now)
    except ValueError as exc:
        print(f"vllm-digest stats: --since: {exc}", file=sys.stderr)
        return 2
    library = _library(settings)

    def describe(entry_id: str) -> tuple[str, int | None]:
        entry = library.get(entry_id)
        return (entry.title, entry.pr) if entry else ("(no longer in the digest)", None)

    with _opened(settings) as store:
        report = build_report(store.engine, since, now, describe)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_text(report))
    return 0


def cmd_db(args: argparse.Namespace, settings: Settings) -> int:
    """`db upgrade`: apply the shipped migrations to DATABASE_URL."""
    with _opened(settings, upgrade=False) as store:
        before, after = store.upgrade()
    print(
        f"database at revision {after}"
        + (f" (was {before or 'empty'})" if before != after else " (up to date)")
    )
    return 0


def cmd_github(args: argparse.Namespace, settings: Settings) -> int:
    """`github refresh`: fetch the digest's PR facts now and print what changed; `github enrich
    FILE.meta.yaml`: fill the metadata GitHub knows and the file lacks."""
    if args.action == "enrich":
        return _github_enrich(args, settings)
    from chatbot.builders import github_client
    from chatbot.github import FactsRefresher
    from chatbot.store.prfacts import PrFactsStore

    library = _library(settings)
    with _opened(settings) as store, contextlib.closing(github_client(settings)) as client:
        report = FactsRefresher(client, PrFactsStore(store.engine)).refresh(library.entries)
    for line in report.lines():
        print(line)
    return 1 if report.error else 0


def _github_enrich(args: argparse.Namespace, settings: Settings) -> int:
    """Fill missing github_title/author/date/tags of a metadata file's items from GitHub."""
    from chatbot.builders import github_client
    from chatbot.github.enrich import enrich_file

    if args.file is None:
        print("vllm-digest github enrich: name the FILE.meta.yaml to fill", file=sys.stderr)
        return 2
    with contextlib.closing(github_client(settings)) as client:
        result = enrich_file(Path(args.file), client)
    for line in result.lines():
        print(line, file=sys.stderr if result.error else sys.stdout)
    return 1 if result.error else 0


def cmd_subscriptions(args: argparse.Namespace, settings: Settings) -> int:
    """Every channel's subscription: from Slack (the store) and from DAILY_CHANNELS."""
    from chatbot.daily.subscription import configured_subscriptions, effective_subscriptions
    from chatbot.store import SubscriptionStore

    with _opened(settings) as store:
        stored = SubscriptionStore(store.engine).all()
    configured = configured_subscriptions(settings.daily_channels, settings.daily_cron, settings.timezone)
    every = effective_subscriptions(configured, stored)
    if args.json:
        print(json.dumps([_subscription_json(s) for s in every], ensure_ascii=False, indent=2))
        return 0
    for s in every:
        topics = ", ".join(s.topic_labels()) or "all topics"
        flags = ("strict" if s.strict else "") + ("" if s.announce else " announce off")
        source = "DAILY_CHANNELS" if s.source == "settings" else f"by {s.updated_by or '?'}"
        print(f"{s.channel}: {topics}; {s.describe_schedule()} {flags.strip()} ({source})".replace("  ", " "))
    if not every:
        print("no subscriptions", file=sys.stderr)
    return 0


def _subscription_json(s: Subscription) -> dict[str, object]:
    return {
        "channel": s.channel,
        "topics": [t.to_json() for t in s.topics],
        "time": s.schedule.time,
        "days": sorted(s.schedule.days),
        "days_text": s.schedule.describe_days(),
        "timezone": s.schedule.zone,
        "cron": s.cron or None,
        "strict": s.strict,
        "announce": s.announce,
        "source": s.source,
        "updated_by": s.updated_by or None,
        "updated_at": s.updated_at.isoformat() if s.updated_at else None,
    }


def cmd_subscribe(args: argparse.Namespace, settings: Settings) -> int:
    """`subscribe CHANNEL [TOPIC …] [at HH:MM] [on DAYS] [tz ZONE]`: as in Slack, without the post."""
    from dataclasses import replace

    from chatbot.daily.subscription import (
        GrammarError,
        Subscription,
        configured_subscriptions,
        default_schedule,
        parse_subscribe,
    )
    from chatbot.daily.topics import resolve_topics
    from chatbot.search import SearchIndex, load_glossary
    from chatbot.store import SubscriptionStore, utc_now

    try:
        request = parse_subscribe(" ".join(args.words))
    except GrammarError as exc:
        print(f"vllm-digest subscribe: {exc}; nothing changed", file=sys.stderr)
        return 2
    library = _library(settings)
    glossary = load_glossary(library.folder)
    resolved = resolve_topics(request.topic_words, glossary, SearchIndex.build(library.entries, glossary))
    if resolved.unknown:
        print(
            f"vllm-digest subscribe: unknown topic words {', '.join(resolved.unknown)}; nothing changed",
            file=sys.stderr,
        )
        return 2
    with _opened(settings) as store:
        subscriptions = SubscriptionStore(store.engine)
        configured = configured_subscriptions(settings.daily_channels, settings.daily_cron, settings.timezone)
        base = subscriptions.get(args.channel) or next(
            (s for s in configured if s.channel == args.channel),
            Subscription(args.channel, default_schedule(settings.daily_cron, settings.timezone)),
        )
        after = replace(request.apply(base, resolved.topics), updated_by="cli")
        subscriptions.put(after, now=utc_now())
    print(
        json.dumps(_subscription_json(after), ensure_ascii=False) if args.json else _subscription_line(after)
    )
    return 0


def cmd_unsubscribe(args: argparse.Namespace, settings: Settings) -> int:
    """Drop the channel's subscription made from Slack (DAILY_CHANNELS stays as configured)."""
    from chatbot.store import SubscriptionStore

    with _opened(settings) as store:
        removed = SubscriptionStore(store.engine).remove(args.channel)
    print(f"{args.channel}: {'unsubscribed' if removed else 'had no subscription'}")
    return 0


def _subscription_line(s: Subscription) -> str:
    topics = ", ".join(s.topic_labels()) or "all topics"
    flags = ", strict" if s.strict else ""
    flags += "" if s.announce else ", announce off"
    return f"{s.channel}: PR of the day on {topics}, {s.describe_schedule()}{flags}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vllm-digest", description="Slack bot for a digest of vLLM PRs.")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_library_commands(sub)
    _add_bot_commands(sub)
    return parser


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _command(
    sub: Subparsers,
    name: str,
    func: Callable[[argparse.Namespace, Settings], int],
    summary: str,
    *,
    json: bool = False,
) -> argparse.ArgumentParser:
    """One subcommand: its handler, its help line and, for the commands that print data, `--json`."""
    p = sub.add_parser(name, help=summary)
    p.set_defaults(func=func)
    if json:
        p.add_argument("--json", action="store_true")
    return p


def _add_library_commands(sub: Subparsers) -> None:
    """Commands that read the digests: validate, list, schema, query, topics, ask."""
    p = _command(sub, "validate", cmd_validate, "check digest files; exit 1 on errors")
    p.add_argument("path", nargs="?", help="file or folder (default DIGEST_DIR)")
    p.add_argument("--explain", action="store_true", help="per entry, the parts understood and hints")

    p = _command(sub, "list", cmd_list, "all entries", json=True)
    p.add_argument("path", nargs="?", help="file or folder (default DIGEST_DIR)")
    p.add_argument("--explain", action="store_true", help="the parts understood of each note, with hints")

    _command(sub, "schema", cmd_schema, "JSON Schema of the structured (YAML) digest form")

    p = _command(sub, "query", cmd_query, "search entries by topic", json=True)
    p.add_argument("topic", nargs="+")
    p.add_argument("--limit", type=int, default=5)

    _command(sub, "topics", cmd_topics, "concepts present in the library with their entry counts", json=True)

    p = _command(sub, "ask", cmd_ask, "answer a follow-up question about an entry", json=True)
    p.add_argument("entry", help="entry id, PR number or PR URL")
    p.add_argument("question", nargs="+")
    p.add_argument(
        "--llm", action="store_true", help="also ask the model server (LLM_BASE_URL) and show both"
    )


def _add_bot_commands(sub: Subparsers) -> None:
    """Commands that run or feed the bot: today, post-today, serve, console, subscriptions, stats, db."""
    for name, func, summary in (
        ("today", cmd_today, "which entry would be the PR of the day (does not post)"),
        ("post-today", cmd_post_today, "post the PR of the day (once per channel and day)"),
    ):
        p = _command(sub, name, func, summary)
        p.add_argument("--channel")
        p.add_argument("--date", type=_iso_date, help="YYYY-MM-DD (default today in TIMEZONE)")

    p = _command(sub, "serve", cmd_serve, "run the bot (Socket Mode with SLACK_APP_TOKEN, else HTTP)")
    p.add_argument("--port", type=int)

    _command(sub, "console", cmd_console, "a local chat that runs the same handlers as Slack")
    _command(sub, "subscriptions", cmd_subscriptions, "every channel's PR of the day subscription", json=True)

    p = _command(
        sub,
        "subscribe",
        cmd_subscribe,
        "subscribe a channel: [TOPIC …] [at HH:MM] [on DAYS] [tz ZONE]",
        json=True,
    )
    p.add_argument("channel", help="channel id (C…)")
    p.add_argument("words", nargs="*", help="topics, at HH:MM, on DAYS, tz ZONE, strict, announce on|off")

    p = _command(sub, "unsubscribe", cmd_unsubscribe, "drop a channel's subscription made from Slack")
    p.add_argument("channel")

    p = _command(
        sub, "stats", cmd_stats, "curator report: searches, queries with no match, entries, votes", json=True
    )
    p.add_argument("--since", default="30d", help="a span (30d, 12h, 2w) or a date YYYY-MM-DD")

    p = _command(sub, "db", cmd_db, "database maintenance")
    p.add_argument("action", choices=["upgrade"])

    p = _command(sub, "github", cmd_github, "GitHub's PR facts: refresh now, or enrich a metadata file")
    p.add_argument("action", choices=["refresh", "enrich"])
    p.add_argument("file", nargs="?", help="enrich: the digest's FILE.meta.yaml")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"vllm-digest: {exc}", file=sys.stderr)
        return 2
    try:
        result: int = args.func(args, settings)
    except BrokenPipeError:
        # The reader went away (`vllm-digest schema | head`): stop quietly, like any Unix tool.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except SettingsError as exc:
        print(f"vllm-digest: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        line = database_error(exc, settings)
        if line is None:
            raise
        print(f"vllm-digest: {line}", file=sys.stderr)
        return 1
    return result


if __name__ == "__main__":
    raise SystemExit(main())
