"""Topic search: tokens, the bilingual vLLM glossary (data/glossary.yaml) and the ranked index.

Core: imports the digest part and rapidfuzz/numpy — never Slack, the store or the scheduler.
"""

from chatbot.search.glossary import Glossary, load_glossary
from chatbot.search.index import Hit, SearchIndex, SearchResult

__all__ = ["Glossary", "Hit", "SearchIndex", "SearchResult", "load_glossary"]
