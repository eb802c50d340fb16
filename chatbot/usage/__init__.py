"""Usage (adapter): what people searched, asked and rated, for metrics and the curator's report.

`UsageStore` (tables of migration 0003), `UsageRecorder` (metrics + rows, called by the Slack
handlers where each request is handled), the report (`chatbot.usage.report`) and the weekly
post (`chatbot.usage.weekly`). No user id is stored: votes carry a salted hash.
"""

from chatbot.usage.privacy import normalise, salt_key, voter_hash
from chatbot.usage.store import FeedbackTarget, UsageStore, Vote, VoteOutcome

__all__ = ["FeedbackTarget", "UsageStore", "Vote", "VoteOutcome", "normalise", "salt_key", "voter_hash"]
