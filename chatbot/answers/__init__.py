"""Follow-up answers: what a question asks (intents, data/), which clause answers it, the answerer.

Core: imports the digest part — never Slack, the store or the scheduler.
"""

from chatbot.answers.answerer import Answer, Answerer, answer_question
from chatbot.answers.intents import Intent, classify

__all__ = ["Answer", "Answerer", "Intent", "answer_question", "classify"]
