"""One property of a ruleset against base: the difference with its interval
and whether the ruleset moved closer to the property's target, further from
it, or showed no change (``docs/equilibrium.md``, "Comparing rulesets at
equilibrium").

Game-agnostic and field-agnostic: the figures come in as plain dicts
(``mean`` or ``value``, ``se``, ``lo``, ``hi``, ``n``), whichever field of
strategies produced them (the equilibrium's mixture, a scripted round robin).

The rule (:func:`versus_base`), for a property with a target range
``[lo, hi]`` (either end may be open):

1. the difference ``other − base`` and its 95% interval: given (``diff``, e.g.
   a paired difference on common deals), else from two independent estimates,
   ``SE = sqrt(se_base² + se_other²)``, ``diff ± 1.96·SE``;
2. the change is *shown* only when that interval excludes 0; otherwise the
   verdict is ``"no change shown"``, whatever the point estimates say;
3. a shown change is judged by each estimate's distance to the target range
   (0 inside it, else the distance to the nearer end): ``"closer to target"``
   when the ruleset's distance is smaller than base's, ``"further from
   target"`` when larger, ``"changed, both within target"`` when both
   estimates lie inside the range, ``"changed, as far from target"`` when the
   two distances are equal outside it (a move across the range);
4. a property without a target (``target=None``, e.g. the search's
   exploitability) is shown, not judged: ``"changed (not judged)"`` or
   ``"no change shown"``.

Two rulesets with the same true value are therefore called closer or further
only when the interval misses 0: in about 5% of runs at the 95% level
(measured in ``tests/core/test_versus.py``).
"""

from __future__ import annotations

import math

Z = 1.959963984540054  # the two-sided 95% normal quantile

CLOSER = "closer to target"
FURTHER = "further from target"
NO_CHANGE = "no change shown"
BOTH_INSIDE = "changed, both within target"
AS_FAR = "changed, as far from target"
NOT_JUDGED = "changed (not judged)"
VERDICTS = (CLOSER, FURTHER, NO_CHANGE, BOTH_INSIDE, AS_FAR, NOT_JUDGED)


def point(x: dict) -> float:
    """A figure's estimate: its ``mean``, else its ``value``."""
    v = x.get("mean", x.get("value"))
    return float("nan") if v is None else float(v)


def std_error(x: dict) -> float:
    """A figure's standard error: its ``se``, else the half-width of its 95%
    interval over 1.96 (a bootstrap range's, e.g.), else NaN."""
    se = x.get("se")
    if se is not None and math.isfinite(float(se)):
        return float(se)
    lo, hi = x.get("lo"), x.get("hi")
    if lo is None or hi is None or not (math.isfinite(float(lo)) and math.isfinite(float(hi))):
        return float("nan")
    return (float(hi) - float(lo)) / (2 * Z)


def distance(value: float, target: tuple | None) -> float:
    """How far ``value`` lies outside the target range ``(lo, hi)`` (either
    end None: open); 0 inside it."""
    if target is None or not math.isfinite(value):
        return float("nan")
    lo, hi = target
    if lo is not None and value < lo:
        return float(lo) - value
    if hi is not None and value > hi:
        return value - float(hi)
    return 0.0


def _opt(v):
    return None if v is None else v if isinstance(v, int) else float(v)


def status(lo, hi, lo_target=None, hi_target=None) -> str:
    """``meets`` if [lo, hi] lies inside the target, ``fails`` if it lies
    wholly outside, else ``unclear`` (also when the interval is unknown)."""
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return "unclear"
    if (lo_target is not None and hi < lo_target) or (hi_target is not None and lo > hi_target):
        return "fails"
    if (lo_target is None or lo >= lo_target) and (hi_target is None or hi <= hi_target):
        return "meets"
    return "unclear"


def base_index(names: list[str]) -> int:
    """The ruleset the others are compared against: the first named "base",
    else the first."""
    return names.index("base") if "base" in names else 0


def meets(x: dict, target: tuple | None) -> str | None:
    """A figure's own status against the target, from its 95% interval
    (:func:`balance.design.status`): ``"meets"`` (inside), ``"fails"``
    (wholly outside) or ``"unclear"``; None without a target."""
    if target is None:
        return None
    lo, hi = x.get("lo"), x.get("hi")
    return status(None if lo is None else float(lo), None if hi is None else float(hi), *target)


def versus_base(
    prop: str, base: dict, other: dict, target: tuple | None, *, diff: dict | None = None
) -> dict:
    """One property of a ruleset (``other``) against base (the module's rule).

    Parameters
    ----------
    prop : str
        The property's name, copied into the row.
    base, other : dict
        Each ruleset's figure: ``mean`` (or ``value``), ``se`` (or a 95%
        interval ``lo``, ``hi`` to derive it from), and ``n``.
    target : (lo, hi) or None
        The target range, either end None for open; None: shown, not judged.
    diff : dict, optional
        The difference's own ``mean``, ``lo``, ``hi`` (e.g. paired on common
        deals); by default from two independent estimates.

    Returns
    -------
    dict
        ``property``, ``base`` and ``value`` (estimates) with their
        ``base_lo``, ``base_hi``, ``base_n``, ``value_lo``, ... and each one's
        own status against the target (``base_status``, ``value_status``:
        :func:`meets`), ``diff``,
        ``diff_lo``, ``diff_hi``, ``diff_se``, ``shown`` (the interval
        excludes 0), ``distance_base``, ``distance`` (to the target), the
        ``target`` and the ``verdict`` (one of :data:`VERDICTS`).
    """
    b, o = point(base), point(other)
    if diff is not None:
        d, lo, hi = point(diff), float(diff["lo"]), float(diff["hi"])
        se = std_error(diff)
    else:
        d = o - b
        se = math.hypot(std_error(base), std_error(other))
        lo, hi = d - Z * se, d + Z * se
    shown = all(math.isfinite(x) for x in (d, lo, hi)) and (lo > 0 or hi < 0)
    db, do = distance(b, target), distance(o, target)
    if not shown:
        verdict = NO_CHANGE
    elif target is None:
        verdict = NOT_JUDGED
    elif do < db:
        verdict = CLOSER
    elif do > db:
        verdict = FURTHER
    elif do == 0:
        verdict = BOTH_INSIDE
    else:
        verdict = AS_FAR
    return {
        "property": prop,
        "base": b,
        "value": o,
        **{
            f"{side}_{k}": _opt(x.get(k))
            for side, x in (("base", base), ("value", other))
            for k in ("lo", "hi", "n")
        },
        "base_status": meets(base, target),
        "value_status": meets(other, target),
        "diff": d,
        "diff_lo": lo,
        "diff_hi": hi,
        "diff_se": se,
        "shown": bool(shown),
        "distance_base": db,
        "distance": do,
        "target": list(target) if target is not None else None,
        "verdict": verdict,
    }


def versus_status(prop: str, base: str, other: str, good: str) -> dict:
    """A three-valued property (``"yes"`` / ``"no"`` / ``"not shown"``, e.g. a
    dominant strategy) of a ruleset against base, ``good`` the value the
    target asks for: ``"closer to target"`` when base is shown to be the bad
    value and the ruleset shown to be the good one, ``"further from target"``
    the reverse, else ``"no change shown"`` (equal, or either not shown)."""
    shown = ("yes", "no")
    if base in shown and other in shown and base != other:
        verdict = CLOSER if other == good else FURTHER
    else:
        verdict = NO_CHANGE
    return {
        "property": prop,
        "base": base,
        "value": other,
        "shown": verdict != NO_CHANGE,
        "target": good,
        "verdict": verdict,
    }


STANDING = {"fails": "still fails", "meets": "now meets", "unclear": "unclear"}


def ruleset_line(name: str, rows: list[dict], against: str = "base", how: str = "") -> str:
    """One line per ruleset: on which properties it is closer to target than
    base, further, and where no change is shown (any other verdict under its
    own words, e.g. "changed, both within target"). A property that moved
    says where the ruleset now stands against the target, from its own
    interval (``value_status``): "closer on draws (still fails)" — an
    improvement that still misses — or "(now meets)"."""
    groups: dict[str, list[str]] = {"closer": [], "further": [], "no change shown": []}
    names = {CLOSER: "closer", FURTHER: "further", NO_CHANGE: "no change shown"}
    for r in rows:
        v = r["verdict"]
        key = names.get(v, v)  # "changed, both within target", ...
        label = r.get("label", r["property"])
        st = r.get("value_status")
        if v in (CLOSER, FURTHER) and st in STANDING:
            label += f" ({'fails' if v == FURTHER and st == 'fails' else STANDING[st]})"
        groups.setdefault(key, []).append(label)
    parts = [f"{k} on {', '.join(v) if v else 'none'}" for k, v in groups.items()]
    return f"{name} vs {against}{(' ' + how) if how else ''}: " + "; ".join(parts)
