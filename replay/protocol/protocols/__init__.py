"""The replay protocols, one module each; importing registers them in the order studies count and show them: lift
(default), hug-oracle, recorded, refine."""

# isort: off
from replay.protocol.protocols import lift  # noqa: F401  (each import registers its protocol)
from replay.protocol.protocols import hug_oracle  # noqa: F401
from replay.protocol.protocols import recorded  # noqa: F401
from replay.protocol.protocols import refine  # noqa: F401

# isort: on
