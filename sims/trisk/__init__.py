"""Trisk (rulebook ``rules/trisk.txt``, rulings R1–R7): the engine surface.

``sims.trisk.cards`` encodes a card set as numbers; ``sims.trisk.engine``
plays it. See ``engine`` for the rules vector and the outputs.
"""

from sims.trisk.engine import (  # noqa: F401
    DEFAULT_RULES,
    DRAW,
    END_NAMES,
    EVENT_COUNTS,
    GAME,
    METRICS,
    PAIR_STREAMS,
    RULE_FIELDS,
    RULE_LIMITS,
    RULES,
    VERSION,
    encode_rules,
    max_length,
    outcome_arrays,
    play_game,
    prepare,
    simulate,
    split_rules,
)
from sims.trisk.profiling import profile  # noqa: F401  (balance bench: where a game's time goes)
from sims.trisk.trace import catalogue, trace  # noqa: F401
