"""The replay protocols, one module each, in one registry (:mod:`~replay.protocol.protocols.base`): lift (the
default), hug-oracle, recorded, refine. Importing this package registers them, in that order (the order studies
count, write and show them in)."""

# isort: off
from replay.protocol.protocols import lift  # noqa: F401  (each import registers its protocol)
from replay.protocol.protocols import hug_oracle  # noqa: F401
from replay.protocol.protocols import recorded  # noqa: F401
from replay.protocol.protocols import refine  # noqa: F401

# isort: on
