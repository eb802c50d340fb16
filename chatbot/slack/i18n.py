"""Interface strings in Chinese and English, in one catalogue; `LANGUAGE` picks the default.

Strings are plain text with `{name}` fields; the builders escape what they put into them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from chatbot.slack.mrkdwn import escape

Language = Literal["zh", "en"]

CATALOGUE: dict[str, dict[Language, str]] = {
    "help.title": {"zh": "vllm-digest 用法", "en": "How to use vllm-digest"},
    "help.body": {
        "zh": (
            "`{command} <主题>` 按主题搜索精读条目，例如 `{command} compile`、`{command} 投机解码`\n"
            "`{command} today` 今日 PR\n"
            "`{command} latest` 最新条目\n"
            "`{command} topics` 可搜索的主题\n"
            "`{command} subscribe [主题] [at HH:MM] [on 周一,周四] [tz 时区]` 为本频道订阅每日 PR；"
            "`{command} unsubscribe [主题]`、`{command} subscriptions`\n"
            "`{command} help` 显示本帮助\n"
            "在 bot 发出的帖子下回复即可追问（例如“有什么风险？”）。"
        ),
        "en": (
            "`{command} <topic>` searches the digest by topic, e.g. `{command} compile`, "
            "`{command} speculative decoding`\n"
            "`{command} today` the PR of the day\n"
            "`{command} latest` the newest entries\n"
            "`{command} topics` topics you can search for\n"
            "`{command} subscribe [topics] [at HH:MM] [on DAYS] [tz ZONE]` the PR of the day in this channel; "
            "`{command} unsubscribe [topics]`, `{command} subscriptions`\n"
            "`{command} help` this help\n"
            'Reply in the thread under a bot post to ask follow-ups (e.g. "what are the risks?").'
        ),
    },
    "results.header": {
        "zh": "“{query}” 的结果：第 {first}–{last} 条，共 {total} 条",
        "en": "Results for “{query}”: {first}–{last} of {total}",
    },
    "results.matched": {"zh": "匹配：{terms}", "en": "Matched: {terms}"},
    "no_match": {
        "zh": "没有找到与 “{query}” 相关的条目。",
        "en": "No entry matches “{query}”.",
    },
    "no_match.suggest": {"zh": "可以试试：{topics}", "en": "Try: {topics}"},
    "topics.header": {"zh": "可搜索的主题", "en": "Topics you can search for"},
    "topics.empty": {"zh": "还没有主题（digest 为空）。", "en": "No topics yet (the digest is empty)."},
    "latest.header": {"zh": "最新条目", "en": "Newest entries"},
    "latest.empty": {"zh": "digest 里还没有条目。", "en": "The digest has no entries yet."},
    "today.header": {"zh": "今日 PR", "en": "PR of the day"},
    "today.empty": {"zh": "今天没有可推荐的 PR。", "en": "There is no PR of the day."},
    "loading.wait": {
        "zh": "⏳ 正在加载 digest，请过几秒再试。",
        "en": "⏳ Still loading the digests, try again in a few seconds.",
    },
    "searching": {"zh": "正在搜索 “{query}”…", "en": "Searching for “{query}”…"},
    "button.share": {"zh": "分享到频道", "en": "Share to channel"},
    "button.more": {"zh": "更多结果", "en": "More results"},
    "button.pr": {"zh": "打开 PR", "en": "Open PR"},
    "card.why": {"zh": "为什么值得读", "en": "Why read it"},
    "card.focus": {"zh": "重点关注", "en": "Focus on"},
    "card.audience": {"zh": "适合谁读", "en": "Who should read it"},
    "card.caveats": {"zh": "注意", "en": "Watch out for"},
    "card.related": {"zh": "相关", "en": "Related"},
    "card.hint": {
        "zh": "有问题？直接在本帖的讨论串里追问，例如“重点看什么？”“有什么风险？”",
        "en": 'Questions? Ask in this thread, e.g. "what should I focus on?" or "any risks?"',
    },
    "today.hint": {
        "zh": "这条消息只有你能看到：点“分享到频道”，就能在它的讨论串里追问。",
        "en": "Only you can see this: use *Share to channel* to ask follow-ups in its thread.",
    },
    "card.shared_by": {"zh": "由 {user} 分享", "en": "Shared by {user}"},
    "share.done": {"zh": "已分享到频道。", "en": "Shared to the channel."},
    "share.duplicate": {
        "zh": "这个条目刚刚已分享到这里了。",
        "en": "This entry was just shared here.",
    },
    "share.not_in_channel": {
        "zh": "无法在这个频道发帖：请先把 bot 邀请进频道（/invite @vllm-digest）。",
        "en": "I can't post in this channel: invite the bot first (/invite @vllm-digest).",
    },
    "share.failed": {
        "zh": "分享失败（{error}），请稍后再试。",
        "en": "Sharing failed ({error}); please try again.",
    },
    "entry.gone": {
        "zh": "这个条目已不在 digest 里了。",
        "en": "That entry is no longer in the digest.",
    },
    "feedback.up": {"zh": "👍 有用", "en": "👍 Helpful"},
    "feedback.down": {"zh": "👎 没用", "en": "👎 Not helpful"},
    "feedback.thanks": {"zh": "谢谢反馈！", "en": "Thanks for the feedback!"},
    "feedback.modal.title": {"zh": "反馈", "en": "Feedback"},
    "feedback.modal.question": {"zh": "缺了什么？（可不填）", "en": "What was missing? (optional)"},
    "feedback.modal.submit": {"zh": "提交", "en": "Send"},
    "feedback.modal.close": {"zh": "跳过", "en": "Skip"},
    "report.header": {"zh": "本周读者反馈", "en": "This week's reader report"},
    "report.summary": {
        "zh": "{since} 至 {until}：{searches} 次搜索，{gaps} 个查询没有结果",
        "en": "{since} to {until}: {searches} searches, {gaps} queries found nothing",
    },
    "report.gaps": {
        "zh": "没有结果的查询（digest 的空白）",
        "en": "Queries with no match (the digest's gaps)",
    },
    "report.top": {"zh": "热门查询", "en": "Top queries"},
    "report.entries": {
        "zh": "条目：浏览 / 分享 / 追问 / 👍 / 👎",
        "en": "Entries: views / shares / questions / 👍 / 👎",
    },
    "report.unanswered": {"zh": "笔记里没有答案的追问", "en": 'Follow-ups answered "not in the note"'},
    "report.none": {"zh": "（无）", "en": "(none)"},
    "error": {"zh": "出错了，请稍后再试。", "en": "Something went wrong; please try again."},
    # Surfaces: link previews, App Home, modals, direct messages, the message shortcut.
    "button.open": {"zh": "查看", "en": "Open"},
    "button.ask_thread": {"zh": "在讨论串里提问", "en": "Ask in a thread"},
    "home.title": {"zh": "vllm-digest：vLLM PR 精读", "en": "vllm-digest: vLLM PRs worth reading"},
    "home.search": {"zh": "按主题搜索", "en": "Search by topic"},
    "home.search_hint": {"zh": "例如 compile、投机解码、prefix cache", "en": "e.g. compile, spec decode"},
    "home.channels": {"zh": "频道订阅", "en": "Channel subscriptions"},
    "home.channels_list": {"zh": "每日 PR 发到：{channels}", "en": "The PR of the day goes to: {channels}"},
    "home.channels_none": {"zh": "还没有频道订阅每日 PR。", "en": "No channel gets the PR of the day yet."},
    "home.updated": {"zh": "更新于 {day}", "en": "Updated {day}"},
    "home.usage": {
        "zh": "在频道里用 `{command} <主题>` 搜索，或直接私信我一个主题。",
        "en": "Use `{command} <topic>` in a channel, or send me a topic in a direct message.",
    },
    "modal.title": {"zh": "vllm-digest", "en": "vllm-digest"},
    "modal.close": {"zh": "关闭", "en": "Close"},
    "dm.more": {"zh": "其他相关条目：{links}", "en": "Also matching: {links}"},
    "share.pick_title": {"zh": "分享到频道", "en": "Share to a channel"},
    "share.pick_label": {"zh": "频道", "en": "Channel"},
    "share.pick_submit": {"zh": "分享", "en": "Share"},
    "share.pick_entry": {"zh": "分享：{title}", "en": "Sharing: {title}"},
    "shortcut.found": {"zh": "这条消息里提到的 PR：", "en": "PRs in this message:"},
    "shortcut.nothing": {
        "zh": "这条消息里没有 digest 里的 PR，也没有能搜索的主题。",
        "en": "This message names no PR in the digest and no topic to search for.",
    },
    "followup.failed": {
        "zh": "抱歉，这个问题没能回答出来，请稍后再问一次。",
        "en": "Sorry, I could not answer that; please ask again in a moment.",
    },
    # -- subscriptions (subscribe / unsubscribe / subscriptions, new-digest announcements) --
    "sub.subscribed": {
        "zh": "{user} 为本频道订阅了每日 PR：{what}。",
        "en": "{user} subscribed this channel to the PR of the day: {what}.",
    },
    "sub.changed": {
        "zh": "{user} 修改了本频道的每日 PR：{what}。",
        "en": "{user} changed this channel's PR of the day: {what}.",
    },
    "sub.unsubscribed": {
        "zh": "{user} 取消了本频道的每日 PR 订阅。",
        "en": "{user} unsubscribed this channel from the PR of the day.",
    },
    "sub.still_settings": {
        "zh": "本频道仍按 DAILY_CHANNELS 设置收到每日 PR：{what}。",
        "en": "This channel still gets the PR of the day from the DAILY_CHANNELS setting: {what}.",
    },
    "sub.on_topics": {"zh": "主题 {topics}，{schedule}", "en": "on {topics}, {schedule}"},
    "sub.all_topics": {"zh": "全部主题，{schedule}", "en": "all topics, {schedule}"},
    "sub.strict": {
        "zh": "只发这些主题（strict，发完后重新一轮）",
        "en": "only these topics (strict: a new round when all were posted)",
    },
    "sub.loose": {
        "zh": "这些主题发完后发其他条目",
        "en": "then the rest once every entry on them was posted",
    },
    "sub.announce_on": {"zh": "有新 digest 时通知本频道", "en": "new digest entries announced here"},
    "sub.announce_off": {"zh": "不通知新 digest", "en": "no new-digest announcements"},
    "sub.done": {"zh": "已完成，确认消息已发到频道。", "en": "Done; the confirmation is in the channel."},
    "sub.bad": {"zh": "未做任何更改：{error}", "en": "Nothing changed: {error}"},
    "sub.unknown": {
        "zh": "未做任何更改：不认识这些主题词：{words}。`/vllm-digest topics` 列出可用主题。",
        "en": "Nothing changed: I don't know the topic words {words}. `/vllm-digest topics` lists the topics.",
    },
    "sub.not_subscribed_to": {
        "zh": "未做任何更改：本频道没有订阅 {topics}。",
        "en": "Nothing changed: this channel is not subscribed to {topics}.",
    },
    "sub.not_in_channel": {
        "zh": "未做任何更改：bot 不在这个频道。请先用 `/invite @vllm-digest` 邀请它，再订阅一次。",
        "en": "Nothing changed: I'm not in this channel. Invite me with `/invite @vllm-digest`, then subscribe again.",
    },
    "sub.failed": {
        "zh": "未做任何更改：Slack 返回 {error}，请稍后再试。",
        "en": "Nothing changed: Slack answered {error}; please try again.",
    },
    "sub.none": {
        "zh": "本频道没有订阅每日 PR。订阅：`/vllm-digest subscribe [主题] [at HH:MM] [on 周一,周四] [tz 时区]`",
        "en": "This channel has no PR of the day. Subscribe: `/vllm-digest subscribe [topics] [at HH:MM] [on DAYS] [tz ZONE]`",
    },
    "sub.settings_only": {
        "zh": "本频道的每日 PR 来自 DAILY_CHANNELS 设置，请让运维在设置里移除。",
        "en": "This channel gets the PR of the day from the DAILY_CHANNELS setting; ask whoever runs the bot to remove it there.",
    },
    "sub.need_store": {
        "zh": "订阅需要数据库：请用 `vllm-digest serve` 运行 bot。",
        "en": "Subscriptions need the database: run the bot with `vllm-digest serve`.",
    },
    "sub.list.header": {"zh": "每日 PR 订阅", "en": "PR of the day subscriptions"},
    "sub.list.this": {"zh": "本频道的每日 PR 订阅", "en": "This channel's PR of the day"},
    "sub.list.empty": {"zh": "还没有频道订阅每日 PR。", "en": "No channel gets the PR of the day yet."},
    "sub.source.settings": {"zh": "DAILY_CHANNELS 设置", "en": "DAILY_CHANNELS setting"},
    "sub.source.slack": {"zh": "由 {user} 设置", "en": "set by {user}"},
    "today.topics_done": {
        "zh": "本频道已经收到过其主题的全部条目：{reason}。",
        "en": "This channel has had every entry on its topics: {reason}.",
    },
    "announce.header": {"zh": "digest 新条目", "en": "New in the digest"},
    "announce.on_topics": {
        "zh": "{count} 个新条目，关于本频道的主题 {topics}：",
        "en": "{count} new entries on this channel's topics ({topics}):",
    },
    "announce.all": {"zh": "{count} 个新条目：", "en": "{count} new entries:"},
    "model.thinking": {"zh": "正在根据精读笔记作答…", "en": "Answering from the curator's note…"},
    "model.source": {
        "zh": "🤖 由模型根据精读笔记作答 · {link}",
        "en": "🤖 Answered by the model from the curator's note · {link}",
    },
    "model.source_digest": {
        "zh": "🤖 由模型根据 digest 条目作答：{links}",
        "en": "🤖 Answered by the model from the digest entries: {links}",
    },
    "extractive.source": {
        "zh": "📝 引自精读笔记 · {link}",
        "en": "📝 Quoted from the curator's note · {link}",
    },
}


class Texts:
    """The catalogue in one language: `texts("button.share")`, `texts("no_match", query=q)`."""

    def __init__(self, language: Language) -> None:
        self.language: Language = language

    def __call__(self, key: str, **fields: object) -> str:
        template = CATALOGUE[key][self.language]
        return template.format(**fields) if fields else template

    def mrkdwn(self, key: str, markup: Mapping[str, str] | None = None, **fields: object) -> str:
        """The string for mrkdwn: template and `fields` escaped; `markup` (links, mentions,
        code spans a builder made from escaped pieces) inserted as it is."""
        template = escape(CATALOGUE[key][self.language])
        return template.format(**{k: escape(str(v)) for k, v in fields.items()}, **(markup or {}))
