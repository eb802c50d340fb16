"""YAML read by libyaml's C parser when PyYAML was built with it (the same data as
`yaml.safe_load`, a tenth of its CPU), else by PyYAML's own: the bundled data files are read at
start and the digests at every load, so every reader of them uses this one loader."""

from __future__ import annotations

from typing import Any

import yaml

LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """The data of one YAML document, as `yaml.safe_load` gives it."""
    return yaml.load(text, Loader=LOADER)
