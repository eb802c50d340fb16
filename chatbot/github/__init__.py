"""Live PR facts from GitHub's REST API (adapter): client, sections, refresh, the background job.

May import the core (`chatbot.digest.PrFacts`) and the store; the core reads the facts only through
a lookup it is handed. See docs/github.md.
"""

from chatbot.github.client import GitHubClient, GitHubUnavailable, NotFound, RateLimited
from chatbot.github.job import GitHubFacts
from chatbot.github.refresh import FactsRefresher, RefreshReport, load_facts

__all__ = [
    "FactsRefresher",
    "GitHubClient",
    "GitHubFacts",
    "GitHubUnavailable",
    "NotFound",
    "RateLimited",
    "RefreshReport",
    "load_facts",
]
