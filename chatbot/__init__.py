"""vllm-digest: a Slack bot around a curated digest of vLLM pull requests.

The core (model, parsing, library, search, answers, picking) imports nothing from Slack,
the scheduler or the database; those live in adapters that call the core.
"""

__version__ = "0.1.0"
