"""The one way a validated strategy table becomes a kernel's weight vector."""

import numpy as np


def weight_vector(
    spec: dict, n_params: int, sections: dict, scalars: dict, defaults: dict
) -> np.ndarray:
    """float64[n_params]: ``defaults`` (index → value), then each section's
    feature weights (``sections``: name → (first index, features)) and the
    scalars (``scalars``: name → (index, help)) that ``spec`` sets. Unknown
    names are the config loader's job to refuse."""
    p = np.zeros(n_params, dtype=np.float64)
    for idx, val in defaults.items():
        p[idx] = val
    for section, (base, feats) in sections.items():
        names = [f[0] for f in feats]
        for key, val in spec.get(section, {}).items():
            p[base + names.index(key)] = float(val)
    for key, (idx, _) in scalars.items():
        if key in spec:
            p[idx] = float(spec[key])
    return p
