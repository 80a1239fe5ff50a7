"""The example training configs, shipped inside the package.

``attnlab train tiny`` reads ``tiny.toml`` from this folder, so the examples work from any
directory, not only from a clone. In a clone the files are ``src/attnlab/presets/*.toml``; in
an installed package ``path("tiny")`` (or ``attnlab train --list-configs``) says where they
are, to copy one and edit it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def names() -> list[str]:
    """The example configs by name (``tiny``, ``default`` ...), sorted."""
    return sorted(p.name[: -len(".toml")] for p in resources.files(__name__).iterdir()
                  if p.name.endswith(".toml"))


def path(name: str) -> Path:
    """The file of example config ``name`` (a KeyError for an unknown one)."""
    if name not in names():
        raise KeyError(name)
    return Path(str(resources.files(__name__) / f"{name}.toml"))


def resolve(config: str | None) -> str | None:
    """A ``CONFIG`` argument as a file: an existing path as given, else the example config of
    that name (``tiny``), else the argument unchanged (so the error names what was typed).

    >>> resolve("tiny").endswith("tiny.toml")
    True
    """
    if config is None or Path(config).exists() or config not in names():
        return config
    return str(path(config))
