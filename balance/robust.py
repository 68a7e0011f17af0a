"""Do the headline verdicts hold under tuned play? (``docs/verdicts.md``)

Every verdict the toolkit prints is measured under a field of hand-written
strategies. The default study adds one tuned strategy per game to that field
(``tuned`` in ``configs/<game>/study.toml``: a strategy made by ``balance
<game> tune``, shipped as ``strategies/<game>/tuned.toml``) and re-checks each
headline verdict with it. Each check is one row: the verdict as measured under
the named strategies, the same measurement under tuned play, both with their
95% intervals and sample sizes, and a status:

* **holds under tuned play**: both measurements show the same call (the same
  property status, meets or fails; an effect of the same sign; an effect
  shown within ±2 points under both: equivalence shown);
* **depends on the strategy**: the calls disagree (a property meets its target
  under one field and fails it under the other; an effect is shown in opposite
  directions, or shown under one strategy with an interval under the other
  that excludes it; the named strongest strategy is beaten head to head);
* **no change shown**: an effect whose interval holds 0 under both strategies
  but is not shown within ±2 points under both: neither measurement shows a
  change, and neither shows there is none (absence of evidence is not
  agreement);
* **unclear**: one call is shown and the other cannot tell (its interval
  straddles the line): more games would settle it.

The core checks, for every game with a round robin (:func:`checks`):

* **strongest strategy**: the named strategy with the highest score against
  the named field, and the tuned strategy's score against it head to head
  (it holds if the named one wins, or if the whole interval lies within 2
  points of 50%: the tuner found nothing better);
  the row also says whether the tuner beat it by at least 5 points, or is
  within 2 points of it, with 95% confidence (:func:`margin_text`);
* **the balance properties** of :mod:`balance.design` (seat fairness,
  dominance, diversity, game length, draws, round cap) for the first
  ruleset, assessed on the named field alone and on the field with the tuned
  strategy;
* **variant effects on the best strategy** (studies with several rule sets):
  the change of the named strongest strategy's score against the named field
  under each rule set, beside the change of the tuned strategy's score against
  the same field.

A game's home adds its own rows (Trisk's card verdicts, the four-suits policy
choices) through its ``study_pages`` hook (links may carry ``"checks"``),
built with :func:`row` and :func:`effect_status`.

Differences of two pooled scores use the unpaired standard error: the runs
of a study share their seed, so the deals are common and positively
correlated, which makes the unpaired interval conservative.
"""

from __future__ import annotations

import math

import pandas as pd

from balance import design
from balance import tables as tmod
from balance.fmt import fmt_int, fmt_pct_ci, fmt_pp_ci

HOLDS = "holds under tuned play"
DEPENDS = "depends on the strategy"
UNCLEAR = "unclear"
NO_CHANGE = "no change shown"
STATUSES = (HOLDS, DEPENDS, UNCLEAR, NO_CHANGE)
COLUMNS = ["variant", "check", "claim", "named", "tuned", "status", "why"]
BEAT_BY = 0.05  # the tuner "beats" the named strongest by at least this, head to head
WITHIN = 0.02  # ... or the named strongest is within this of it
_Z = 1.959963984540054


def is_tuned(name: str, tuned: str) -> bool:
    """``tuned``, ``tuned@deck`` and ``tuned@loadout`` are the tuned strategy."""
    return str(name).partition("@")[0] == tuned


def row(variant, check, claim, named, tuned, status, why="") -> dict:
    """One check (the columns of :data:`COLUMNS`)."""
    if status not in STATUSES:  # pragma: no cover (a caller's bug)
        raise ValueError(f"unknown status {status!r}")
    return dict(zip(COLUMNS, (variant, check, claim, named, tuned, status, why), strict=True))


def call(lo: float, hi: float) -> str:
    """The sign an interval of a difference shows: '+', '-' or '0' (neither)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "?"
    return "+" if lo > 0 else "-" if hi < 0 else "0"


def within(lo: float, hi: float, margin: float = WITHIN) -> bool:
    """Whether an interval of a difference lies wholly within ±``margin``
    (an equivalence shown at the interval's level)."""
    return math.isfinite(lo) and math.isfinite(hi) and -margin <= lo and hi <= margin


def effect_status(named: str, tuned: str, differ: bool = False, equivalent: bool = False) -> str:
    """The status of an effect measured twice (calls from :func:`call`):
    the same shown sign holds; no clear change under either ('0' twice)
    holds only where ``equivalent`` (both intervals within ±:data:`WITHIN`,
    :func:`within`), else it is "no change shown"; opposite shown signs
    depend on the strategy, and so do different calls where the two effects
    differ significantly (``differ``, :func:`effects_differ`, Holm over the
    family of checks); any other pair of different calls is unclear."""
    if "?" in (named, tuned):
        return UNCLEAR
    if named == tuned == "0":
        return HOLDS if equivalent else NO_CHANGE
    if named == tuned:
        return HOLDS
    if {named, tuned} == {"+", "-"} or differ:
        return DEPENDS
    return UNCLEAR


def diff_p(a: dict, b: dict) -> float:
    """Two-sided p of "two independently measured effects (``mean``, ``lo``,
    ``hi``: 95% intervals) are equal", from the standard errors the intervals
    imply (normal); nan where an interval is missing."""
    se = [(x["hi"] - x["lo"]) / (2 * _Z) for x in (a, b)]
    if not all(math.isfinite(v) for v in se):
        return float("nan")
    s = math.sqrt(se[0] ** 2 + se[1] ** 2)
    if s == 0:
        return 1.0 if a["mean"] == b["mean"] else 0.0
    return math.erfc(abs(a["mean"] - b["mean"]) / s / math.sqrt(2))


def effects_differ(pairs: list[tuple[dict, dict]], alpha: float = 0.05) -> list[bool]:
    """For a family of effects each measured under both strategies: does each
    pair differ, Holm-adjusted over the family at ``alpha`` (so a page of 31
    rule sets does not find a difference by looking 31 times)?"""
    import numpy as np

    from balance.stats import holm

    if not pairs:
        return []
    p = np.array([diff_p(a, b) for a, b in pairs], float)
    ok = np.isfinite(p)
    out = np.zeros(len(p), bool)
    if ok.any():
        reject, _ = holm(p[ok], alpha)
        out[ok] = np.asarray(reject, bool)
    return [bool(x) for x in out]


def property_status(named: str, tuned: str) -> str:
    """The status of a property judged twice (meets / fails / unclear)."""
    if named == tuned and named != "unclear":
        return HOLDS
    if {named, tuned} == {"meets", "fails"}:
        return DEPENDS
    return UNCLEAR


CALL_WORDS = {"+": "raises", "-": "lowers", "0": "no clear change to", "?": "no measure of"}


def equivalence_words(a: dict, b: dict) -> str:
    """What the two intervals of an effect say about "no change": shown within
    ±:data:`WITHIN` under both, or not shown."""
    if within(a["lo"], a["hi"]) and within(b["lo"], b["hi"]):
        return f"; within ±{100 * WITHIN:.0f} points under both: no change shown either way"
    return f"; a change within ±{100 * WITHIN:.0f} points is not shown under both"


# --------------------------------------------------------------------------- scores
def side_runs(matches: dict, variant: str, x: str, opponents) -> list:
    """(run, side) of every match of ``x`` against ``opponents`` under ``variant``."""
    out = []
    for (v, a, b), r in matches.items():
        if v != variant:
            continue
        if a == x and b in opponents and b != x:
            out.append((r, "a"))
        elif b == x and a in opponents and a != x:
            out.append((r, "b"))
    return out


def score(matches: dict, variant: str, x: str, opponents) -> dict:
    """``x``'s score (win + ½ draw) against ``opponents``, pooled by deal, with
    its 95% interval, standard error and games."""
    runs = side_runs(matches, variant, x, opponents)
    if not runs:
        nan = float("nan")
        return {"score": nan, "lo": nan, "hi": nan, "se": nan, "games": 0}
    p = tmod.pooled_side(runs)
    return {
        "score": p["score"],
        "lo": p["score_lo"],
        "hi": p["score_hi"],
        "se": p.get("score_se", float("nan")),
        "games": p["games"],
    }


def _pct(s: dict) -> str:
    return fmt_pct_ci(s["score"], s["lo"], s["hi"], s["games"])


def difference(a: dict, b: dict) -> dict:
    """``a − b`` of two scores with the unpaired (conservative) 95% interval."""
    d = a["score"] - b["score"]
    se = math.sqrt(a["se"] ** 2 + b["se"] ** 2)
    return {"mean": d, "lo": d - _Z * se, "hi": d + _Z * se, "n": min(a["games"], b["games"])}


def margin_text(h2h: dict, name: str, best: str) -> str:
    """Whether the tuned strategy beats ``best`` by at least :data:`BEAT_BY` or is
    within :data:`WITHIN` of it, head to head, with 95% confidence."""
    lo, hi = h2h["lo"] - 0.5, h2h["hi"] - 0.5
    if lo >= BEAT_BY:
        return f"{name} beats {best} by at least {100 * BEAT_BY:.0f} points (95% confidence)"
    if -WITHIN <= lo and hi <= WITHIN:
        return (
            f"{best} is within {100 * WITHIN:.0f} points of {name}, the best the tuner found "
            "at its budget (95% confidence)"
        )
    return (
        f"neither a {100 * BEAT_BY:.0f}-point win nor a {100 * WITHIN:.0f}-point tie is shown "
        f"between {name} and {best} at this sample"
    )


# --------------------------------------------------------------------------- the checks
def strongest(matches: dict, variant: str, tuned: str, field: list) -> tuple:
    """The named strongest strategy (by score against the named ``field``) and
    its row: the tuned strategy's head-to-head score against it."""
    scores = {x: score(matches, variant, x, field) for x in field}
    scores = {x: s for x, s in scores.items() if s["games"]}
    if not scores:
        return None, None
    best = max(scores, key=lambda x: (scores[x]["score"], x))
    h2h = score(matches, variant, tuned, [best])
    t_field = score(matches, variant, tuned, field)
    claim = f"{best} is the strongest named strategy"
    named_fig = f"{best}: {_pct(scores[best])} against the named field"
    if not h2h["games"]:
        return best, row(
            variant, "strongest strategy", claim, named_fig, "not played", UNCLEAR, "no games"
        )
    st, why = UNCLEAR, "the head-to-head interval holds 50% but is wider than ±2 points"
    if h2h["lo"] > 0.5:
        st, why = DEPENDS, f"{tuned} beats {best} head to head"
    elif h2h["hi"] < 0.5:
        st, why = HOLDS, f"{best} beats {tuned} head to head"
    elif h2h["lo"] >= 0.5 - WITHIN and h2h["hi"] <= 0.5 + WITHIN:
        st = HOLDS
        why = f"the tuner found nothing more than {100 * WITHIN:.0f} points better than {best}"
    tuned_fig = (
        f"{tuned} scores {_pct(h2h)} head to head against {best} and {_pct(t_field)} "
        f"against the named field; {margin_text(h2h, tuned, best)}"
    )
    return best, row(variant, "strongest strategy", claim, named_fig, tuned_fig, st, why)


def property_rows(
    matches: dict, variant: str, named: list, everyone: list, thresholds: dict, tuned: str
) -> list[dict]:
    """The balance properties of ``variant`` on the named field and on the field
    with the tuned strategy."""
    sub = {k: r for k, r in matches.items() if k[0] == variant}
    only = {k: r for k, r in sub.items() if k[1] in named and k[2] in named}
    a = design.assess(only, [variant], named, thresholds)
    b = design.assess(sub, [variant], everyone, thresholds)
    rows = []
    for prop in design.PROPERTIES:
        ra = a[a["property"] == prop]
        rb = b[b["property"] == prop]
        if ra.empty or rb.empty:
            continue
        ra, rb = ra.iloc[0], rb.iloc[0]
        st = property_status(str(ra["status"]), str(rb["status"]))
        rows.append(
            row(
                variant,
                design.LABELS.get(prop, prop),
                f"{design.LABELS.get(prop, prop)}: {ra['status']}",
                str(ra["text"]),
                str(rb["text"]),
                st,
                f"{ra['status']} under the named field, {rb['status']} with {tuned}",
            )
        )
    return rows


def variant_rows(
    matches: dict, variants: list, base: str, best: str, tuned: str, field: list
) -> list[dict]:
    """Each rule set's effect on the named strongest strategy's score, beside its
    effect on the tuned strategy's (both against the named field)."""
    rows = []
    b0 = score(matches, base, best, field)
    t0 = score(matches, base, tuned, field)
    others = [v for v in variants if v != base]
    effects = [
        (
            difference(score(matches, v, best, field), b0),
            difference(score(matches, v, tuned, field), t0),
        )
        for v in others
    ]
    differ = effects_differ(effects)
    for v, (dn, dt), dif in zip(others, effects, differ, strict=True):
        cn, ct = call(dn["lo"], dn["hi"]), call(dt["lo"], dt["hi"])
        eq = within(dn["lo"], dn["hi"]) and within(dt["lo"], dt["hi"])
        rows.append(
            row(
                v,
                "variant effect on the best strategy",
                f"{v} {CALL_WORDS[cn]} {best}'s score",
                f"{best}: {fmt_pp_ci(dn['mean'], dn['lo'], dn['hi'], dn['n'])} against "
                f"the named field, {v} vs {base}",
                f"{tuned}: {fmt_pp_ci(dt['mean'], dt['lo'], dt['hi'], dt['n'])} against "
                f"the same field",
                effect_status(cn, ct, dif, eq),
                f"{CALL_WORDS[cn]} {best}; {CALL_WORDS[ct]} {tuned}"
                + (equivalence_words(dn, dt) if cn == ct == "0" else ""),
            )
        )
    return rows


def checks(matches: dict, variants: list, tuned: str, thresholds: dict) -> pd.DataFrame:
    """Every core check of a round robin that includes ``tuned`` (module doc);
    an empty table if the tuned strategy did not play."""
    names = sorted({s for _, a, b in matches for s in (a, b)})
    tuned_names = [s for s in names if is_tuned(s, tuned)]
    if len(tuned_names) != 1 or not variants:
        return pd.DataFrame(columns=COLUMNS)
    t = tuned_names[0]
    named = [s for s in names if s != t]
    field = [s for s in named if not design._is_baseline(s, thresholds["baselines"])] or named
    base = variants[0]
    best, first = strongest(matches, base, t, field)
    if best is None:
        return pd.DataFrame(columns=COLUMNS)
    rows = [first, *property_rows(matches, base, named, names, thresholds, t)]
    rows += variant_rows(matches, variants, base, best, t, field)
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(df: pd.DataFrame) -> str:
    """One line: how many checks hold, depend on the strategy, show no change
    under either, are unclear."""
    if df is None or df.empty:
        return "no verdict was re-checked under tuned play"
    counts = df["status"].value_counts()
    h, d, u, n = (int(counts.get(s, 0)) for s in STATUSES)
    return (
        f"{fmt_int(len(df))} verdict{'s' if len(df) != 1 else ''} re-checked under tuned play: "
        f"{h} hold{'s' if h == 1 else ''}, {d} depend{'s' if d == 1 else ''} on the strategy, "
        + (f"{n} show{'s' if n == 1 else ''} no change under either, " if n else "")
        + f"{u} unclear"
    )
