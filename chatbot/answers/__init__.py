"""Follow-up answers: whether a reply is for the bot, what a question asks (its kinds, data/),
the candidates of the note and one scorer over them, the answerer.

Core: imports the digest part — never Slack, the store or the scheduler.
"""

from chatbot.answers.addressing import FOLLOWUP_MODES, FollowUpMode, addressed_to_bot
from chatbot.answers.answerer import Answer, Answerer, answer_question
from chatbot.answers.intents import Intent, classify

__all__ = [
    "FOLLOWUP_MODES",
    "Answer",
    "Answerer",
    "FollowUpMode",
    "Intent",
    "addressed_to_bot",
    "answer_question",
    "classify",
]
