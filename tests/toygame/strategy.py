"""High Card's one decision: boost the revealed card or not."""

from __future__ import annotations

import numpy as np

from kernels.contract import Side, refuse

SECTIONS: dict = {}
SCALARS = {"boost_below": (4.0, "boost a revealed card whose value is at most this")}


def encode_strategy(spec: dict, side: Side) -> np.ndarray:
    refuse("High Card", side, "forbidden", "loadout", "deck")
    return np.array([float(spec.get("boost_below", SCALARS["boost_below"][0]))])
