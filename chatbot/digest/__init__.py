"""The digest: entry model, the raw-text and YAML forms, note anatomy, and the library of files.

Core: imports only the standard library, pydantic and PyYAML — never Slack, the store or the scheduler.
"""

from chatbot.digest.clauses import clauses, clean, sentences, split_top_level
from chatbot.digest.explain import Explanation, explain
from chatbot.digest.facts import FactsLookup, PrFacts, Review, facts_lookup, no_facts, passed_over
from chatbot.digest.library import Library
from chatbot.digest.model import DigestParseError, Entry, Metadata, Problem, entry_id
from chatbot.digest.note import NoteParts, analyse_note
from chatbot.digest.people import full_names
from chatbot.digest.rawtext import ParseResult, parse_raw_text
from chatbot.digest.refs import Ref, pull_url
from chatbot.digest.structured import is_glossary_file, json_schema, parse_structured
from chatbot.digest.yamlnodes import validation_error_line, yaml_error_line, yaml_line

__all__ = [
    "DigestParseError",
    "Entry",
    "Explanation",
    "FactsLookup",
    "Library",
    "Metadata",
    "NoteParts",
    "ParseResult",
    "PrFacts",
    "Problem",
    "Ref",
    "Review",
    "analyse_note",
    "clauses",
    "clean",
    "entry_id",
    "explain",
    "facts_lookup",
    "full_names",
    "is_glossary_file",
    "json_schema",
    "no_facts",
    "parse_raw_text",
    "parse_structured",
    "passed_over",
    "pull_url",
    "sentences",
    "split_top_level",
    "validation_error_line",
    "yaml_error_line",
    "yaml_line",
]
