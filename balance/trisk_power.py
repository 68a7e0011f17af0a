"""The equal-power test of a Trisk card set (``balance trisk power``).

The rulebook claims "Every card is built to be equal in power". That is an
equivalence claim: failing to find a difference proves nothing, so each card
must be *shown* to lie within a margin δ (METHODS.md, "All cards are equal in
power"). Three designs measure a card's power:

* **Swap-in** (causal, paired). For each card c and each Primal P that can
  play it, one neutral copy of P's reference deck is replaced by c (same deck
  position, so the shuffles stay paired). That deck and the unswapped
  reference deck (the *baseline*) each play the same field (every Primal's
  reference deck under the field strategies) on the same seeds, seat-swapped.
  The per-deal difference of A's half points, swap − baseline, is the card's
  effect on the score (win + ½ draw) per game. A card's effect pools its
  cells (one per Primal and field opponent, equally weighted); the SE adds
  the cells' variances (a stratified mean).
* **Restricted play** (Jaffe et al. 2012). The swap-in deck forbidden to play
  c (every copy is drawn and held, never played; the reference deck may hold
  copies already), against the same field on the same seeds: restricted −
  baseline is what the dead copies cost; swap − restricted, per copy, is
  what playing one copy of c is worth.
* **Regression** (observational over random decks). Random legal deck pairs,
  a logistic regression (statsmodels GLM, Binomial) of the score on per-card
  count differences plus Primal dummies, with the neutral card as the
  reference level: one coefficient per card, in points per copy.

The verdict per card: TOST at margin δ passes → "equal"; otherwise a
two-sided test of effect 0, Holm-adjusted over all cards, rejects → "not
equal" (with direction and size); otherwise "inconclusive", with the games
that would decide it. The claim holds iff every card is "equal"
(intersection–union test, Berger 1982: no multiplicity correction needed).
The same for the Primals: each reference deck's score against the field of
the others, tested against 50%.

The test is sequential: every card starts at ``games`` per run; the runs of
undecided cards (inconclusive, or different from the neutral card with a CI
that still reaches into ±δ) are extended (doubling, the runner's ``extend``) up to
``max_games``. Every run goes through the store, and the decision to extend
depends on stored numbers only, so an interrupted test rerun reads every
finished run and continues where it stopped. The nominal α is not adjusted
for the few looks this makes; the page says so.
"""

from __future__ import annotations

import math
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from balance.config import CONFIG_DIR, load_toml
from balance.errors import UserError

GAME = "trisk"
PLAN_FILE = CONFIG_DIR / GAME / "power.toml"
BUDGET_FILE = CONFIG_DIR / GAME / "BUDGET.md"

VERDICTS = ("equal", "not equal", "inconclusive")


# =========================================================================== plan
@dataclass(frozen=True)
class PowerPlan:
    """What ``balance trisk power`` plays (``configs/trisk/power.toml``).

    Margins are stored as fractions of a point of score (``delta = 0.02`` is
    two percentage points); game counts are per run (one card, one Primal,
    one field opponent).
    """

    delta: float = 0.02
    alpha: float = 0.05
    power: float = 0.9
    seed: int = 5
    variant: str = "base"
    strategies: tuple[str, ...] = ("tempo",)
    field: tuple[str, ...] = ("tempo",)
    games: int = 200
    max_games: int = 3200
    restricted_games: int = 200
    regression_pairs: int = 1200
    regression_games: int = 20
    regression_strategy: str = "tempo"
    finishes_games: int = 2000
    cards: tuple[str, ...] | None = None  # a subset of the cards (None: all)
    description: str = ""
    card_set: str | None = None  # a designer's set (path) instead of the variant's
    decks: str | None = None  # its decks file (default configs/trisk/decks.toml)

    def scaled(self, scale: float) -> "PowerPlan":
        """Every game and deck-pair count multiplied by ``scale`` (even, ≥ 2)."""
        if not (scale > 0 and math.isfinite(scale)):
            raise UserError(f"--scale must be a positive number, got {scale}")
        return replace(self, games=_even(self.games * scale),
                       max_games=_even(self.max_games * scale),
                       restricted_games=_even(self.restricted_games * scale),
                       regression_pairs=max(2, int(math.ceil(self.regression_pairs * scale))),
                       regression_games=_even(self.regression_games * scale),
                       finishes_games=_even(self.finishes_games * scale))

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["delta_points"] = self.delta * 100
        return d


def _even(x: float) -> int:
    n = max(2, int(math.ceil(x)))
    return n + n % 2


_PLAN_KEYS = {"description", "variant", "delta", "alpha", "power", "seed", "strategies", "field",
              "games", "max_games", "restricted_games", "regression", "finishes"}


def _plan_int(path, key: str, value, lo: int = 2) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise UserError(f"{path}: '{key}' must be an integer ≥ {lo}, got {value!r}")
    return value


def _names(path, key: str, value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if (not isinstance(value, list) or not value
            or not all(isinstance(v, str) and v.strip() for v in value)):
        raise UserError(f"{path}: '{key}' must be a non-empty list of strategy names")
    if len(set(value)) != len(value):
        raise UserError(f"{path}: '{key}' names a strategy twice")
    return tuple(v.strip() for v in value)


def load_plan(path: str | Path | None = None, **overrides: Any) -> PowerPlan:
    """The power-test plan from ``path`` (default ``configs/trisk/power.toml``),
    with ``overrides`` (``None`` values ignored) applied and checked.

    ``delta`` is read and overridden in points (2.0 = two points of score).
    """
    path = Path(path) if path is not None else PLAN_FILE
    data = load_toml(path)
    for key in data:
        if key not in _PLAN_KEYS:
            raise UserError(f"{path}: unknown key '{key}'; allowed: {', '.join(sorted(_PLAN_KEYS))}")
    reg = data.get("regression", {})
    fin = data.get("finishes", {})
    for name, table, allowed in (("regression", reg, ("pairs", "games", "strategy")),
                                 ("finishes", fin, ("games",))):
        if not isinstance(table, dict):
            raise UserError(f"{path}: '{name}' must be a table")
        for key in table:
            if key not in allowed:
                raise UserError(f"{path}: unknown key '{key}' in [{name}]; allowed: {', '.join(allowed)}")
    kw: dict[str, Any] = {}
    if "description" in data:
        kw["description"] = str(data["description"])
    if "variant" in data:
        kw["variant"] = str(data["variant"])
    for key in ("delta", "alpha", "power"):
        if key in data:
            v = data[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise UserError(f"{path}: '{key}' must be a number, got {v!r}")
            kw[key] = float(v)
    if "seed" in data:
        kw["seed"] = _plan_int(path, "seed", data["seed"], 0)
    for key in ("strategies", "field"):
        if key in data:
            kw[key] = _names(path, key, data[key])
    for key in ("games", "max_games", "restricted_games"):
        if key in data:
            kw[key] = _plan_int(path, key, data[key])
    if "pairs" in reg:
        kw["regression_pairs"] = _plan_int(path, "regression.pairs", reg["pairs"], 0)
    if "games" in reg:
        kw["regression_games"] = _plan_int(path, "regression.games", reg["games"])
    if "strategy" in reg:
        kw["regression_strategy"] = _names(path, "regression.strategy", reg["strategy"])[0]
    if "games" in fin:
        kw["finishes_games"] = _plan_int(path, "finishes.games", fin["games"], 0)
    kw["delta"] = kw.get("delta", 2.0)
    for key, value in overrides.items():
        if value is not None:
            kw[key] = value
    kw["delta"] = float(kw["delta"]) / 100.0
    return check_plan(PowerPlan(**kw), str(path))


def check_plan(plan: PowerPlan, where: str = "plan") -> PowerPlan:
    """Refuse a plan no test can run with (one line naming the value)."""
    if not 0 < plan.delta < 0.5:
        raise UserError(f"{where}: --delta must be between 0 and 50 points, got {plan.delta * 100:g}")
    if not 0 < plan.alpha < 0.5:
        raise UserError(f"{where}: --alpha must be between 0 and 0.5, got {plan.alpha:g}")
    if not 0 < plan.power < 1:
        raise UserError(f"{where}: power must be between 0 and 1, got {plan.power:g}")
    if not 0 <= plan.seed <= 2**64 - 1:
        raise UserError(f"{where}: --seed must be between 0 and 2**64-1, got {plan.seed}")
    for key in ("games", "max_games", "restricted_games", "regression_games"):
        v = getattr(plan, key)
        if v < 2 or v % 2:
            raise UserError(f"{where}: {key.replace('_', '-')} must be a positive even number "
                            f"of games (whole seat-swapped deals), got {v}")
    if plan.max_games < plan.games:
        raise UserError(f"{where}: --max-games ({plan.max_games}) is below --games ({plan.games})")
    if plan.cards is not None and not plan.cards:
        raise UserError(f"{where}: --cards names no card")
    if plan.cards is not None:
        seen: dict[str, str] = {}
        for name in plan.cards:
            key = str(name).strip().lower()
            if key in seen:
                raise UserError(f"{where}: --cards names '{seen[key]}' twice; name each card once")
            seen[key] = str(name).strip()
    return plan


# =========================================================================== statistics
_Z95 = 1.959963984540054


def _norm():
    from scipy import stats as sps

    return sps.norm


def pool_strata(diffs: Sequence[np.ndarray]) -> dict[str, float]:
    """Pool per-deal differences over strata (cells and field opponents),
    with a standard error that holds when the strata share their deals.

    Every stratum of a card used to replay the same deals (side A's shuffle
    depends on the seed and the deal only), so deal ``i`` of one stratum and
    deal ``i`` of another are correlated (+0.01 to +0.21 measured on the
    engine, issue 15): adding the strata's variances as if independent made
    SEs 1.4–3.6× too small. The SE here is cluster-robust, a cluster being
    one deal index across the strata: the sandwich of the estimator's
    influence summed per deal. With strata of equal length (every run of a
    card has the same size) it is exactly the SE of the per-deal average over
    the strata, ``sd(c_i)/sqrt(n)`` with ``c_i`` the mean over strata of deal
    ``i``; with unequal lengths every deal still counts (a stratum's deal
    ``i`` joins cluster ``i``). It is right whether the strata share deals or
    not, so it also holds for runs on derived per-stratum seeds (what
    :func:`run_power` plays), where it estimates the same thing as the
    stratified formula.

    Parameters
    ----------
    diffs : sequence of 1-D arrays
        One array per stratum: the per-deal difference of score per game
        (e.g. ``(swap - baseline) / 4`` of the half-point codes), deal ``i``
        of every stratum at position ``i``.

    Returns
    -------
    dict
        ``mean``: the equally weighted mean of the strata means (the effect
        against a field in which every opponent counts the same);
        ``se``: its cluster-robust SE (``G/(G-1)`` small-sample factor, ``G``
        deal clusters); ``sd``: the per-deal SD of the cluster average,
        ``se·sqrt(G)`` (with ``n`` deals per stratum, ``se = sd/sqrt(n)``:
        what :func:`games_to_decide` plans with); ``se_independent``: the SE
        the strata would give if independent (``sqrt(sum var_k/n_k)/K``);
        ``design_effect``: ``(se/se_independent)²``; ``n_deals``, ``n_games``
        (= 2 deals: games of one side, all strata), ``strata``, ``clusters``.
        Strata with fewer than 2 deals give ``nan`` spreads.
    """
    arrs = [np.asarray(d, dtype=float).ravel() for d in diffs]
    arrs = [a for a in arrs if a.size]
    k = len(arrs)
    nan = float("nan")
    if k == 0:
        return {"mean": nan, "se": nan, "sd": nan, "se_independent": nan, "design_effect": nan,
                "n_deals": 0, "n_games": 0, "strata": 0, "clusters": 0}
    means = np.array([a.mean() for a in arrs])
    ns = np.array([a.size for a in arrs], dtype=float)
    n = int(ns.sum())
    g = int(ns.max())
    mean = float(means.mean())
    if (ns < 2).any():
        se = se_ind = nan
    else:
        u = np.zeros(g)  # each deal cluster's influence on the mean of strata means
        for a, m in zip(arrs, means):
            u[:a.size] += (a - m) / (k * a.size)
        se = float(math.sqrt(g / (g - 1) * float(np.sum(u * u))))
        var = np.array([a.var(ddof=1) for a in arrs])
        se_ind = float(math.sqrt(np.sum(var / ns)) / k)
    deff = se * se / (se_ind * se_ind) if se_ind and math.isfinite(se_ind) else nan
    return {"mean": mean, "se": se, "sd": float(se * math.sqrt(g)) if math.isfinite(se) else nan,
            "se_independent": se_ind, "design_effect": deff,
            "n_deals": n, "n_games": 2 * n, "strata": k, "clusters": g}


def games_to_decide(effect: float, sd: float, delta: float, alpha: float = 0.05,
                    power: float = 0.9, family: int = 1, strata: int = 1) -> float:
    """Games (of one side, over all its strata) for a test to decide a card.

    Parameters
    ----------
    effect, sd : float
        The observed effect and the per-deal SD of its cluster average (the
        mean over the strata of one deal: ``sd`` of :func:`pool_strata`), in
        score units.
    delta : float
        Equivalence margin.
    alpha : float
        Level of each one-sided TOST test and of the Holm family (already
        divided by the looks when the test is sequential).
    power : float
        Chance of deciding that the estimate is planned for.
    family : int
        Number of tests in the Holm family; the difference test is planned at
        the strictest Holm step, ``alpha / family``.
    strata : int
        Strata the card's games are spread over (each plays the same number
        of deals).

    Returns
    -------
    float
        With ``|effect| < delta``, the games for the TOST to pass when the
        true effect equals the observed one, ``n = (z_{1-α} + z_p)² sd² /
        (δ - |effect|)²`` deals a stratum (``z_{(1+p)/2}`` at an effect of
        exactly 0, where both one-sided tests must pass); otherwise the games
        for the two-sided test to reject at ``α / family``, ``n =
        (z_{1-α/(2 family)} + z_p)² sd² / effect²``. Games: ``2 n`` a
        stratum (two a deal, rounded up to a whole deal) times ``strata``.
        ``nan`` when ``sd`` is not known; ``inf`` when no number of games
        decides (effect exactly at the margin, or 0 and not within the
        margin).
    """
    norm = _norm()
    k = max(int(strata), 1)
    if not (math.isfinite(effect) and math.isfinite(sd)):
        return float("nan")
    if sd == 0:
        return 2.0 * k
    zp = float(norm.ppf(power))
    a = abs(effect)
    if a < delta:
        zb = float(norm.ppf((1 + power) / 2)) if a == 0 else zp
        deals = ((float(norm.ppf(1 - alpha)) + zb) * sd / (delta - a)) ** 2
    elif a > 0:
        deals = ((float(norm.ppf(1 - alpha / (2 * max(family, 1)))) + zp) * sd / a) ** 2
    else:
        return float("inf")
    return float(2 * math.ceil(deals) * k)


MIN_GAMES = 400  # fewer games of a row than this decide nothing: the plug-in SE of a
#                 handful of paired deals can be near 0 (most deals never draw the card)


def decide(table: pd.DataFrame, delta: float, alpha: float = 0.05,
           power: float = 0.9, min_games: int = MIN_GAMES) -> pd.DataFrame:
    """The verdict for every row (a card or a Primal) of an effects table.

    Parameters
    ----------
    table : DataFrame
        Columns ``effect`` (difference from the reference: 0 for a card's
        effect, 50% for a Primal's score), ``se``, ``sd`` (per deal) and
        ``games`` (games of the side tested, all strata together).
    delta, alpha, power : float
        Margin, level, and the power the games needed are planned for.

    Returns
    -------
    DataFrame
        A copy with ``lo``/``hi`` (95% CI), ``p`` (two-sided normal test of
        0), ``p_holm`` and ``significant`` (Holm over every row),
        ``tost_p``, ``lo90``/``hi90`` and ``equivalent`` (TOST at ``delta``),
        ``verdict`` ("equal" if the TOST passes; else "not equal" if Holm
        rejects; else "inconclusive"; always "inconclusive" below
        ``min_games`` games), ``direction`` ("stronger" /
        "weaker" for a "not equal" row), ``games_needed`` (total games of the
        tested side for an inconclusive row to be decided, see
        :func:`games_to_decide`) and ``more_games`` (that minus ``games``).
    """
    from balance.stats import holm, tost

    norm = _norm()
    out = table.copy()
    eff = out["effect"].to_numpy(float)
    se = out["se"].to_numpy(float)
    out["lo"] = eff - _Z95 * se
    out["hi"] = eff + _Z95 * se
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2 * norm.sf(np.abs(eff) / se), np.where(eff == 0, 1.0, 0.0))
    p = np.where(np.isfinite(eff) & np.isfinite(se), p, np.nan)
    out["p"] = p
    reject, p_adj = holm(p, alpha)
    out["p_holm"] = p_adj
    out["significant"] = reject
    tosts = [tost(m, s, delta, alpha=alpha) for m, s in zip(eff, se)]
    out["tost_p"] = [t["p"] for t in tosts]
    out["lo90"] = [t["lo90"] for t in tosts]
    out["hi90"] = [t["hi90"] for t in tosts]
    out["equivalent"] = [t["equivalent"] for t in tosts]
    enough = out["games"].to_numpy(float) >= min_games
    verdict = np.where(~enough, "inconclusive",
                       np.where(out["equivalent"], "equal",
                                np.where(out["significant"], "not equal", "inconclusive")))
    out["verdict"] = verdict
    out["direction"] = np.where(verdict == "not equal", np.where(eff > 0, "stronger", "weaker"), "")
    family = int(np.isfinite(p).sum())
    strata = (out["strata"].to_numpy(float) if "strata" in out.columns
              else np.ones(len(out)))
    needed = [max(games_to_decide(m, s, delta, alpha, power, family, int(k)), float(min_games))
              if v == "inconclusive" else float("nan")
              for m, s, v, k in zip(eff, out["sd"].to_numpy(float), verdict, strata)]
    out["games_needed"] = needed
    out["more_games"] = np.maximum(np.asarray(needed) - out["games"].to_numpy(float), 0)
    return out


def claim(verdicts: Iterable[str], what: str = "cards") -> dict[str, Any]:
    """The overall claim "all <what> are equal in power" from per-row verdicts.

    Returns
    -------
    dict
        ``status``: "holds" (every row "equal": the intersection–union test
        rejects at the rows' own level), "does not hold" (some row "not
        equal"), or "undecided" (none "not equal", some "inconclusive");
        ``counts`` per verdict; ``text``: one sentence.
    """
    vs = list(verdicts)
    counts = {v: vs.count(v) for v in VERDICTS}
    n = len(vs)
    if n and counts["equal"] == n:
        status = "holds"
        text = f"The claim holds: all {n} {what} are shown equal in power within the margin."
    elif counts["not equal"]:
        status = "does not hold"
        text = (f"The claim does not hold: {counts['not equal']} of {n} {what} differ in power "
                f"(Holm-adjusted); {counts['equal']} shown equal, {counts['inconclusive']} inconclusive.")
    else:
        status = "undecided"
        text = (f"Undecided: {counts['equal']} of {n} {what} shown equal, "
                f"{counts['inconclusive']} inconclusive (more games would decide), none shown different.")
    return {"status": status, "counts": counts, "n": n, "text": text}


def pairing_ratio(points_x: np.ndarray, points_y: np.ndarray) -> float:
    """Paired SE / unpaired SE of the difference of two runs on the same deals.

    The unpaired SE is what the same runs would give on independent deals,
    ``sqrt(var(x)/n + var(y)/n)``; below 1 means common seeds reduced the
    variance (games saved: ``1 - ratio²``). ``nan`` when either is 0.
    """
    x = np.asarray(points_x, float) / 4
    y = np.asarray(points_y, float) / 4
    n = len(x)
    if n < 2:
        return float("nan")
    paired = (x - y).std(ddof=1) / math.sqrt(n)
    unpaired = math.sqrt(x.var(ddof=1) / n + y.var(ddof=1) / n)
    return float(paired / unpaired) if unpaired > 0 else float("nan")


def _straddles(r, delta: float) -> bool:
    """A "not equal" row whose CI still overlaps the equivalence band (−δ, δ)."""
    return r.verdict == "not equal" and r.lo < delta and r.hi > -delta


def next_games(n: int, games: float, needed: float, max_games: int) -> int:
    """The next run size of an undecided card: at least double, enough for
    ``needed`` total games if ``n`` per run gives ``games``, a power-of-two
    multiple of ``n`` (so reruns land on the same sizes), at most ``max_games``."""
    factor = needed / games if (math.isfinite(needed) and games > 0) else 2.0
    k = max(1, math.ceil(math.log2(max(factor, 2.0))))
    return int(min(max_games, n * 2 ** k))


# =========================================================================== the plan's runs
@dataclass
class Context:
    """The resolved objects a power test plays with."""

    plan: PowerPlan
    ruleset: Any
    cardset: Any
    decks: dict  # Primal row -> its reference Deck
    ours: list  # our strategies (no deck)
    field: list  # field sides: strategy with a reference deck
    cells: list[tuple[int, int]]  # (card row, Primal row)
    cards: list[int]  # card rows tested, in table order

    def name(self, row: int) -> str:
        return str(self.cardset.names[row])

    def side(self, strategy, deck):
        return strategy.with_deck(deck, len(self.cardset.names))


def plan_cells(cs, decks: Mapping[int, Any], subset: Sequence[str] | None = None
               ) -> tuple[list[int], list[tuple[int, int]]]:
    """The cards tested and their cells ``(card row, Primal row)``: every
    non-neutral, non-Primal card, with every Primal whose reference deck can
    play it. ``subset`` restricts to those card names (a user error names an
    unknown or untestable one)."""
    testable = [r for r in range(len(cs.names))
                if r != cs.neutral and cs.type_of(r) != "Primal"]
    if subset is not None:
        rows = []
        for name in subset:
            try:
                r = cs.row(name)
            except (KeyError, ValueError, UserError):
                r = None
            if r is None or r not in testable:
                why = ("the neutral card is the reference" if r == cs.neutral else
                       "a Primal leads a deck, it is not swapped in" if r is not None else
                       "no such card")
                raise UserError(f"--cards: '{name}' cannot be tested ({why}); a card is one of: "
                                f"{', '.join(cs.names[x] for x in testable)}")
            if r not in rows:
                rows.append(r)
        testable = sorted(rows)
    cells = []
    for r in testable:
        for p in sorted(decks):
            if r in set(int(x) for x in cs.playable(p)):
                cells.append((r, p))
    return testable, cells


def build_context(plan: PowerPlan) -> Context:
    """Load the ruleset, card set, reference decks and strategies of ``plan``."""
    from balance import trisk_cards
    from balance.config import load_strategy, resolve_variant

    rs = resolve_variant(GAME, plan.variant)
    if plan.card_set:
        rs = replace(rs, rules={**rs.rules, "card_set": str(plan.card_set)})
    cs = rs.card_set()
    by_name = trisk_cards.load_decks(cs, plan.decks)
    decks = {int(d.primal): d for d in by_name.values()}
    ours = [load_strategy(GAME, s) for s in plan.strategies]
    field_strats = [load_strategy(GAME, s) for s in plan.field]
    n = len(cs.names)
    field_sides = [f.with_deck(decks[p], n) for f in field_strats for p in sorted(decks)]
    cards, cells = plan_cells(cs, decks, plan.cards)
    if not cells:
        raise UserError("no card of the set can be swapped into a reference deck")
    return Context(plan, rs, cs, decks, ours, field_sides, cells, cards)


def _ident(spec) -> str:
    """A run's identity without its size (a run and its extensions share it).

    Within one test the ruleset and card set are fixed, so the sides, seed and
    rules name a run; this avoids re-reading the card set for every lookup."""
    from balance.runner import _side
    from balance.store import config_hash

    return config_hash({"rules": spec.ruleset.rules, "variant": spec.ruleset.name,
                        "a": _side(spec.a), "b": _side(spec.b), "seed": spec.seed,
                        "per_game": spec.per_game})


class _Runs:
    """Every run of the test so far, by identity, through the store."""

    def __init__(self, store, threads, progress: bool, store_only: bool = False):
        self.store = store
        self.store_only = store_only
        self.threads = threads
        self.progress = progress
        self.have: dict[str, Any] = {}
        self.simulated = 0  # runs simulated (not read from the store) in this process
        self.read = 0

    def run(self, specs: list, label: str) -> None:
        from balance import runner

        todo, extend = [], {}
        for s in specs:
            prev = self.have.get(_ident(s))
            if prev is not None and prev.games >= s.n_games:
                continue
            if prev is not None:
                extend[len(todo)] = prev
            todo.append(s)
        if not todo:
            return
        res = runner.run_many(todo, store=self.store, threads=self.threads, progress=self.progress,
                              label=label, extend=extend, store_only=self.store_only)
        for r in res:
            self.have[_ident(r.spec)] = r
            if r.cached:
                self.read += 1
            else:
                self.simulated += 1

    def get(self, spec):
        return self.have[_ident(spec)]


@dataclass
class PowerResult:
    """Everything the page and the CLI show (tables are pandas DataFrames)."""

    plan: PowerPlan
    cards: pd.DataFrame  # one row per card: effect, CI, verdict, restricted, regression
    cells: pd.DataFrame  # one row per (card, Primal)
    primals: pd.DataFrame  # one row per Primal: score vs field, verdict
    regression: pd.DataFrame | None
    regression_info: dict
    finishes: dict | None
    claim: dict
    primal_claim: dict
    decks: list[dict]
    pairing: dict
    stages: list[dict]
    manifest: dict
    runs_simulated: int = 0
    runs_read: int = 0
    budget: dict = field(default_factory=dict)


_M64 = 2**64 - 1


def _splitmix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def stratum_seed(seed: int, primal: int, opponent: int) -> int:
    """The seed of one stratum: our Primal's deck (row ``primal``) against the
    field deck of Primal ``opponent``.

    Every run of a stratum (the reference deck, every swap-in, restricted
    play, under any strategy) plays on this seed, so a card's effect stays a
    paired difference on the same deals; different strata play different
    deals, so a card's strata are independent. On one shared seed they were
    not: side A's shuffle depends on (seed, deal) only and the swapped card
    sits at the same deck position in every reference deck, so it turned up
    at the same moment against every opponent and the strata correlated
    (issue 15). Independence also makes each stratum's games count in full:
    with correlation ρ between K strata, the variance of the mean over them
    is ``(1 + (K-1)ρ)/K`` of a stratum's, not ``1/K``. (The SE of
    :func:`pool_strata` is cluster-robust and would hold on a shared seed
    too; the derived seeds are what make the games worth their number.)
    """
    return _splitmix(_splitmix(_splitmix(int(seed)) ^ (int(primal) + 1)) ^ ((int(opponent) + 1) << 20))


def _seed(ctx: Context, p: int, o) -> int:
    q = int(o.deck.primal) if o.deck is not None else 0
    return stratum_seed(ctx.plan.seed, p, q)


def _swap_spec(ctx: Context, s, c: int, p: int, o, n: int):
    from balance.runner import RunSpec

    return RunSpec(ctx.ruleset, ctx.side(s, ctx.decks[p].swap_in(c)), o, n, _seed(ctx, p, o))


def _base_spec(ctx: Context, s, p: int, o, n: int):
    from balance.runner import RunSpec

    return RunSpec(ctx.ruleset, ctx.side(s, ctx.decks[p]), o, n, _seed(ctx, p, o))


def _restricted_spec(ctx: Context, s, c: int, p: int, o, n: int):
    from balance.runner import RunSpec

    a = ctx.side(s, ctx.decks[p].swap_in(c)).restricted_card(c, ctx.name(c))
    return RunSpec(ctx.ruleset, a, o, n, _seed(ctx, p, o))


def _mirror(ctx: Context, s, p: int, o) -> bool:
    return o.deck is not None and int(o.deck.primal) == p and o.spec == s.spec


def _cell_strata(ctx, runs: _Runs, c: int, p: int, n: int, kind: str = "swap"):
    """Per-deal differences of one cell, one array per (strategy, opponent),
    and the pairing ratio of each."""
    diffs, ratios = [], []
    for s in ctx.ours:
        for o in ctx.field:
            base = runs.get(_base_spec(ctx, s, p, o, 2)).pair_points.astype(float)
            if kind == "swap":
                x = runs.get(_swap_spec(ctx, s, c, p, o, 2)).pair_points.astype(float)
            else:
                x = runs.get(_restricted_spec(ctx, s, c, p, o, 2)).pair_points.astype(float)
            k = min(len(x), len(base), n // 2)
            diffs.append((x[:k] - base[:k]) / 4)
            ratios.append(pairing_ratio(x[:k], base[:k]))
    return diffs, ratios


def _primal_strata(ctx, runs: _Runs, p: int) -> list[np.ndarray]:
    out = []
    for s in ctx.ours:
        for o in ctx.field:
            if _mirror(ctx, s, p, o):
                continue  # a deck against itself scores 50% by symmetry
            out.append(runs.get(_base_spec(ctx, s, p, o, 2)).pair_points.astype(float) / 4 - 0.5)
    return out


def _card_tables(ctx: Context, runs: _Runs, n_card: dict[int, int]):
    cell_rows, card_rows, ratios = [], [], []
    for c in ctx.cards:
        strata = []
        for (cc, p) in ctx.cells:
            if cc != c:
                continue
            diffs, r = _cell_strata(ctx, runs, c, p, n_card[c])
            ratios += r
            st = pool_strata(diffs)
            cell_rows.append({"card": ctx.name(c), "row": c, "primal": ctx.name(p), "primal_row": p,
                              "effect": st["mean"], "se": st["se"],
                              "lo": st["mean"] - _Z95 * st["se"], "hi": st["mean"] + _Z95 * st["se"],
                              "games": st["n_games"]})
            strata += diffs
        st = pool_strata(strata)
        prim = [ctx.name(p) for (cc, p) in ctx.cells if cc == c]
        card_rows.append({"card": ctx.name(c), "row": c, "primals": ", ".join(prim),
                          "n_primals": len(prim), "effect": st["mean"], "se": st["se"],
                          "sd": st["sd"], "games": st["n_games"], "games_per_run": n_card[c],
                          "strata": st["strata"], "design_effect": st["design_effect"]})
    return pd.DataFrame(cell_rows), pd.DataFrame(card_rows), ratios


def _primal_table(ctx: Context, runs: _Runs, n_base: dict[int, int]) -> pd.DataFrame:
    rows = []
    for p in sorted(ctx.decks):
        st = pool_strata(_primal_strata(ctx, runs, p))
        rows.append({"primal": ctx.name(p), "row": p, "deck": ctx.decks[p].name,
                     "effect": st["mean"], "se": st["se"], "sd": st["sd"], "games": st["n_games"],
                     "games_per_run": n_base[p], "strata": st["strata"],
                     "design_effect": st["design_effect"]})
    return pd.DataFrame(rows)


def run_power(plan: PowerPlan, *, results: str | Path | None = None, threads: int | None = None,
              progress: bool = True, log: Callable[[str], None] | None = None,
              regression: bool = True, finishes: bool = True,
              stop_after: int | None = None, store_only: bool = False) -> PowerResult:
    """Run (or read from the store) the equal-power test of ``plan``.

    Parameters
    ----------
    plan : PowerPlan
    results : path, optional
        The store (default ``$BALANCE_RESULTS`` or ``./results``).
    threads : int, optional
        Numba threads; results do not depend on it.
    progress : bool
        Show the runner's progress bars.
    log : callable, optional
        Gets one line per stage (for the CLI).
    regression, finishes : bool
        Also run the regression on random decks / the finishes check.
    stop_after : int, optional
        Stop (raise ``KeyboardInterrupt``) after this many card runs have
        been simulated in the first stage: for tests of resuming.
    store_only : bool
        Simulate nothing: every run must be in the store (a report rebuilt
        from a study); a missing one is a user error.

    Returns
    -------
    PowerResult
    """
    from balance.store import Store

    t0 = time.perf_counter()
    say = log or (lambda _line: None)
    ctx = build_context(plan)
    runs = _Runs(Store(results), threads, progress, store_only)
    n_card = {c: plan.games for c in ctx.cards}
    n_primal = {p: plan.games for p in ctx.decks}
    stages: list[dict] = []
    primal_cards = {p: [c for (c, q) in ctx.cells if q == p] for p in ctx.decks}
    active = set(ctx.cards)
    active_p = set(ctx.decks)
    stage = 0
    while True:
        n_base = {p: max([n_primal[p]] + [n_card[c] for c in primal_cards[p]]) for p in ctx.decks}
        base = [_base_spec(ctx, s, p, o, n_base[p]) for p in sorted(ctx.decks)
                for s in ctx.ours for o in ctx.field]
        runs.run(base, f"trisk power: stage {stage + 1}, reference decks")
        done = 0
        for c in ctx.cards:  # card by card, so an interruption leaves whole cards stored
            if c not in active:
                continue
            specs = [_swap_spec(ctx, s, c, p, o, n_card[c]) for (cc, p) in ctx.cells if cc == c
                     for s in ctx.ours for o in ctx.field]
            runs.run(specs, f"trisk power: stage {stage + 1}, {ctx.name(c)}")
            done += 1
            if stop_after is not None and stage == 0 and done >= stop_after:
                raise KeyboardInterrupt(f"stopped after {done} cards (stop_after)")
        cells, cards, ratios = _card_tables(ctx, runs, n_card)
        cards = decide(cards, plan.delta, plan.alpha, plan.power)
        primals = decide(_primal_table(ctx, runs, n_base), plan.delta, plan.alpha, plan.power)
        counts = cards["verdict"].value_counts().to_dict()
        stages.append({"stage": stage + 1, "cards_run": len(active), "primals_run": len(active_p),
                       "games_per_run": sorted({n_card[c] for c in active}),
                       **{v: int(counts.get(v, 0)) for v in VERDICTS}})
        say(f"stage {stage + 1}: {len(active)} cards at {', '.join(map(str, stages[-1]['games_per_run']))}"
            f" games a run → {counts.get('equal', 0)} equal, {counts.get('not equal', 0)} not equal, "
            f"{counts.get('inconclusive', 0)} inconclusive")
        active, active_p = set(), set()
        for r in cards.itertuples():
            # a card that differs from the neutral one but whose CI still reaches
            # into ±δ may yet prove equal within the margin: it plays on too
            if (r.verdict == "inconclusive" or _straddles(r, plan.delta)) \
                    and n_card[r.row] < plan.max_games:
                n_card[r.row] = next_games(n_card[r.row], r.games, r.games_needed, plan.max_games)
                active.add(r.row)
        for r in primals.itertuples():
            if r.verdict == "inconclusive" and n_primal[r.row] < plan.max_games:
                n_primal[r.row] = next_games(n_primal[r.row], r.games, r.games_needed, plan.max_games)
                active_p.add(r.row)
        if not active and not active_p:
            break
        stage += 1

    # restricted play: the swap-in deck forbidden to play the card
    nr = min(plan.restricted_games, plan.games)  # paired with the first games of every run
    rspecs = [_restricted_spec(ctx, s, c, p, o, nr) for (c, p) in ctx.cells
              for s in ctx.ours for o in ctx.field]
    runs.run(rspecs, "trisk power: restricted play")
    cards = _add_restricted(ctx, runs, cards, nr)

    reg, reg_info = None, {}
    if regression and plan.regression_pairs > 0:
        reg, reg_info = run_regression(ctx, results=results, threads=threads, progress=progress,
                                       store_only=store_only,
                                       log=say)
        cards = cards.merge(reg[["row", "reg_points", "reg_lo", "reg_hi", "reg_p"]], on="row",
                            how="left")
    fin = None
    if finishes and plan.finishes_games:
        fin = _stored_finishes(ctx, results, threads, store_only)

    ratios = np.asarray([r for r in ratios if np.isfinite(r)])
    pairing = {}
    if ratios.size:
        med = float(np.median(ratios))
        pairing = {"median": med, "lo": float(ratios.min()), "hi": float(ratios.max()),
                   "strata": int(ratios.size), "saving": 1 - med ** 2}
    cards = cards.sort_values("effect", ascending=False, kind="stable").reset_index(drop=True)
    elapsed = time.perf_counter() - t0
    return PowerResult(
        plan=plan, cards=cards, cells=cells, primals=primals, regression=reg,
        regression_info=reg_info, finishes=fin,
        claim=claim(cards["verdict"], "cards"), primal_claim=claim(primals["verdict"], "Primals"),
        decks=_deck_rows(ctx), pairing=pairing, stages=stages,
        manifest=_manifest(ctx, elapsed, runs, threads), runs_simulated=runs.simulated,
        runs_read=runs.read, budget=_budget(ctx))


def _add_restricted(ctx: Context, runs: _Runs, cards: pd.DataFrame, nr: int) -> pd.DataFrame:
    """Restricted play forbids the card's row, so every copy in the swapped deck
    (the one swapped in and any the reference deck already holds) is dead:
    ``restricted`` is all of them dead against the reference deck, and
    ``play_value`` (swapped − restricted) is what playing the card is worth
    per copy in the deck (each cell's difference divided by its copies)."""
    rows = []
    for c in ctx.cards:
        dead, play, copies = [], [], []
        for (cc, p) in ctx.cells:
            if cc != c:
                continue
            d, _ = _cell_strata(ctx, runs, c, p, nr, "restricted")
            dead += d
            k_copies = ctx.decks[p].swap_in(c).cards.count(c)
            copies.append(k_copies)
            for s in ctx.ours:
                for o in ctx.field:
                    x = runs.get(_swap_spec(ctx, s, c, p, o, 2)).pair_points.astype(float)
                    y = runs.get(_restricted_spec(ctx, s, c, p, o, 2)).pair_points.astype(float)
                    k = min(len(x), len(y), nr // 2)
                    play.append((x[:k] - y[:k]) / 4 / k_copies)
        a, b = pool_strata(dead), pool_strata(play)
        rows.append({"row": c, "copies": float(np.mean(copies)),
                     "restricted": a["mean"], "restricted_lo": a["mean"] - _Z95 * a["se"],
                     "restricted_hi": a["mean"] + _Z95 * a["se"], "restricted_games": a["n_games"],
                     "play_value": b["mean"], "play_lo": b["mean"] - _Z95 * b["se"],
                     "play_hi": b["mean"] + _Z95 * b["se"]})
    return cards.merge(pd.DataFrame(rows), on="row", how="left")


def _deck_rows(ctx: Context) -> list[dict]:
    out = []
    cs = ctx.cardset
    for p in sorted(ctx.decks):
        d = ctx.decks[p]
        counts: dict[str, int] = {}
        for r in d.cards:
            counts[cs.names[int(r)]] = counts.get(cs.names[int(r)], 0) + 1
        out.append({"primal": cs.names[p], "name": d.name, "size": len(d.cards),
                    "cards": ", ".join(f"{k} ×{v}" for k, v in counts.items())})
    return out


def _budget(ctx: Context) -> dict:
    text = BUDGET_FILE.read_text(encoding="utf-8") if BUDGET_FILE.is_file() else ""
    pts = []
    for c in ctx.cards:
        try:
            pts.append({"card": ctx.name(c), "points": ctx.cardset.points(c)})
        except Exception:  # noqa: BLE001 - a card set without a budget shows none
            break
    return {"markdown": text, "points": pts}


def _manifest(ctx: Context, elapsed: float, runs: _Runs, threads) -> dict:
    from balance.runner import provenance

    return {
        **provenance(GAME),
        "seed": ctx.plan.seed,
        "card_set": ctx.ruleset.rules.get("card_set"),
        "card_set_digest": ctx.cardset.digest,
        "variant": ctx.ruleset.name,
        "plan": ctx.plan.as_dict(),
        "timings": {"total_s": round(elapsed, 2), "threads": threads,
                    "runs_simulated": runs.simulated, "runs_read": runs.read},
    }


# =========================================================================== regression
REG_CHUNK = 200  # deck pairs per stored table: an interrupted regression loses at most one


def _pair_seed(seed: int, k: int) -> int:
    return (seed * 0x9E3779B97F4A7C15 + 0xBF58476D1CE4E5B9 * (k + 1)) % 2**64


def regression_decks(ctx: Context, k: int) -> tuple[Any, Any]:
    """Deck pair ``k`` of the regression: a random Primal each side, a random
    legal deck of its reference deck's size (the same for any chunking)."""
    from balance import trisk_cards

    rng = np.random.default_rng([ctx.plan.seed, 0x7265, k])
    prim = sorted(ctx.decks)
    out = []
    for side in "ab":
        p = int(prim[int(rng.integers(len(prim)))])
        size = len(ctx.decks[p].cards)
        cards = trisk_cards.random_deck(ctx.cardset, p, size, rng)
        out.append(trisk_cards.make_deck(ctx.cardset, f"random{k}{side}", p, cards))
    return out[0], out[1]


def _regression_chunk(ctx: Context, strat, first: int, count: int) -> pd.DataFrame:
    from balance.registry import get_game

    eng = get_game(GAME).engine_module()
    rules = ctx.ruleset.vector()
    m = ctx.plan.regression_games
    rows = []
    for k in range(first, first + count):
        da, db = regression_decks(ctx, k)
        out = eng.simulate(rules, ctx.side(strat, da).vector(), ctx.side(strat, db).vector(),
                           _pair_seed(ctx.plan.seed, k), 0, m)
        pts = np.asarray(out["a_points"])
        rows.append({"pair": k, "primal_a": da.primal, "primal_b": db.primal,
                     "deck_a": list(da.cards), "deck_b": list(db.cards),
                     "a_wins": int((pts == 2).sum()), "b_wins": int((pts == 0).sum()),
                     "draws": int((pts == 1).sum()), "games": int(len(pts))})
    return pd.DataFrame(rows)


def run_regression(ctx: Context, *, results=None, threads=None, progress: bool = True,
                   log: Callable[[str], None] | None = None,
                   store_only: bool = False) -> tuple[pd.DataFrame, dict]:
    """Play the random deck pairs (chunks stored and resumed) and fit the model.

    Returns
    -------
    (DataFrame, dict)
        One row per tested card: ``coef`` (log-odds per copy, against a
        neutral copy), its 95% CI, ``reg_points`` (win-rate points per copy at
        an even game, ``coef / 4``), ``reg_lo``, ``reg_hi``, ``reg_p``,
        ``copies`` (copies dealt over all decks). The dict: pairs, games,
        the fit's notes.
    """
    import polars as pl

    from balance import runner
    from balance.config import load_strategy
    from balance.registry import get_game
    from balance.store import Store, config_hash

    plan = ctx.plan
    strat = load_strategy(GAME, plan.regression_strategy)
    store = Store(results)
    runner.set_threads(threads)
    eng = get_game(GAME).engine_module()
    frames = []
    n_chunks = math.ceil(plan.regression_pairs / REG_CHUNK)
    bar = runner._Progress(plan.regression_pairs * plan.regression_games,
                           "trisk power: regression decks", progress and sys.stderr.isatty())
    try:
        for i in range(n_chunks):
            first = i * REG_CHUNK
            count = min(REG_CHUNK, plan.regression_pairs - first)
            key = config_hash({"kind": "trisk-power-regression", "engine_version": eng.VERSION,
                               "rules": ctx.ruleset.rules, "card_set_digest": ctx.cardset.digest,
                               "strategy": strat.spec, "seed": plan.seed, "first": first,
                               "count": count, "games": plan.regression_games, "format": 1})
            loaded = store.load(GAME, key, parse=_needs_table("regression"),
                                recompute=not store_only)
            if loaded is not None:
                frames.append(loaded[1]["regression"].to_pandas())
            elif store_only:
                raise UserError(f"the regression decks {first}..{first + count - 1} of the power "
                                f"test are not in the store {store.root}; run `balance study` "
                                "(or `balance trisk power`) first")
            else:
                t1 = time.perf_counter()
                df = _regression_chunk(ctx, strat, first, count)
                store.save(GAME, key, {"kind": "trisk-power-regression", "first": first,
                                       "count": count, "seed": plan.seed,
                                       "card_set_digest": ctx.cardset.digest,
                                       "engine_version": eng.VERSION,
                                       "timings": {"simulate_s": round(time.perf_counter() - t1, 3)}},
                           {"regression": pl.from_pandas(df)})
                frames.append(df)
            bar.advance(count * plan.regression_games)
    finally:
        bar.close()
    data = pd.concat(frames, ignore_index=True)
    return fit_regression(ctx, data)


def fit_regression(ctx: Context, data: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The logistic regression of the score on count differences (see
    :func:`run_regression`); cards never dealt are "not estimable".

    Quasi-binomial: the games of one deck pair share its decks (and their
    seat-swapped deals share shuffles), so the pair's score varies more than a
    binomial's (Pearson χ²/df ≈ 2.2 on the reference set, issue 15). The
    fit's scale is Pearson χ²/df of the binomial fit (never below 1), which
    widens every interval by its square root; ``info["dispersion"]`` is it.
    """
    import statsmodels.api as sm

    cs = ctx.cardset
    nc = len(cs.names)
    ca = np.zeros((len(data), nc))
    cb = np.zeros((len(data), nc))
    for i, (a, b) in enumerate(zip(data["deck_a"], data["deck_b"])):
        np.add.at(ca[i], np.asarray(a, int), 1)
        np.add.at(cb[i], np.asarray(b, int), 1)
    diff = ca - cb
    dealt = ca.sum(0) + cb.sum(0)
    cols = [c for c in range(nc) if c != cs.neutral and c not in ctx.decks and dealt[c] > 0
            and np.any(diff[:, c] != 0)]
    prim = sorted(ctx.decks)
    pa = np.array([[1.0 if x == p else 0.0 for p in prim[1:]] for x in data["primal_a"]])
    pb = np.array([[1.0 if x == p else 0.0 for p in prim[1:]] for x in data["primal_b"]])
    X = np.hstack([diff[:, cols], (pa - pb).reshape(len(data), -1)])
    succ = data["a_wins"].to_numpy(float) + data["draws"].to_numpy(float) / 2
    fail = data["games"].to_numpy(float) - succ
    info = {"pairs": int(len(data)), "games": int(data["games"].sum()),
            "reference": cs.names[cs.neutral], "primal_reference": cs.names[prim[0]], "note": "",
            "dispersion": float("nan")}
    nan = float("nan")
    coef = {c: (nan, nan, nan, nan) for c in ctx.cards}
    keep = np.any(X != 0, axis=0)
    try:
        import warnings

        model = sm.GLM(np.column_stack([succ, fail]), X[:, keep], family=sm.families.Binomial())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit = model.fit()
            # quasi-binomial: scale = Pearson chi2 / df. (statsmodels' fit(scale="X2")
            # leaves the trials out of chi2 with a two-column endog: 20x too small.)
            phi = float(fit.pearson_chi2 / fit.df_resid) if fit.df_resid > 0 else 1.0
            phi = max(phi, 1.0) if math.isfinite(phi) else 1.0
            fit = model.fit(scale=phi)
        names = sorted({type(w.message).__name__ if not isinstance(w.message, str) else "warning"
                        for w in caught})
        if names:
            info["note"] = ("statsmodels warned: " + ", ".join(names)
                            + "; coefficients of rarely dealt cards are unreliable")
        info["dispersion"] = float(fit.scale)
        params, ci, pv = fit.params, fit.conf_int(0.05), fit.pvalues
        j = 0
        for idx, c in enumerate(cols):
            if not keep[idx]:
                continue
            coef[c] = (float(params[j]), float(ci[j][0]), float(ci[j][1]), float(pv[j]))
            j += 1
    except Exception as exc:  # noqa: BLE001 - separation or a singular design: report, don't fail
        info["note"] = f"the fit failed ({type(exc).__name__}: {exc})"
    rows = []
    for c in ctx.cards:
        b, lo, hi, p = coef[c]
        rows.append({"card": cs.names[c], "row": c, "coef": b, "coef_lo": lo, "coef_hi": hi,
                     "reg_points": b / 4, "reg_lo": lo / 4, "reg_hi": hi / 4, "reg_p": p,
                     "copies": int(dealt[c])})
    return pd.DataFrame(rows), info


# =========================================================================== finishes
_FINISHES = ("Common", "Radiant", "Signed")
_FIN_LINE = re.compile(r"^(\s*finishes\s*=\s*)\[[^\]]*\]", re.M)


def permute_finishes(text: str) -> tuple[str, int]:
    """The card-set TOML text with every card's ``finishes`` list replaced by a
    different non-empty subset of Common, Radiant, Signed; returns the text and
    how many lists changed."""
    subsets = [[f for j, f in enumerate(_FINISHES) if m >> j & 1] for m in range(1, 8)]
    count = 0

    def repl(m: re.Match) -> str:
        nonlocal count
        old = sorted(re.findall(r'"([^"]*)"', m.group(0)))
        i = count
        while True:
            new = subsets[i % len(subsets)]
            if sorted(new) != old:
                break
            i += 1
        count += 1
        return m.group(1) + "[" + ", ".join(f'"{f}"' for f in new) + "]"

    return _FIN_LINE.sub(repl, text), count


def finishes_check(ctx: Context, games: int, threads: int | None = None) -> dict:
    """Finishes are cosmetic: permute every card's finishes, reload the set,
    and compare its encoded table, its digest and ``games`` games of the first
    reference decks (our strategy vs the first field side) with the original.

    Returns
    -------
    dict
        ``cards`` (finish lists changed), ``table_equal``, ``digest_equal``,
        ``games``, ``differ`` (deals whose pair points differ), ``text``.
    """
    import tempfile

    from balance import runner
    from balance.runner import RunSpec

    text, changed = permute_finishes(Path(ctx.cardset.path).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="trisk-finishes-") as tmp:
        other = Path(tmp) / "cards.toml"
        other.write_text(text, encoding="utf-8")
        rs2 = replace(ctx.ruleset, rules={**ctx.ruleset.rules, "card_set": str(other)})
        cs2 = rs2.card_set()
        table_equal = bool(np.array_equal(np.asarray(cs2.table), np.asarray(ctx.cardset.table)))
        digest_equal = cs2.digest == ctx.cardset.digest
        differ, n = 0, 0
        if games:
            runner.set_threads(threads)
            p = sorted(ctx.decks)[0]
            a = ctx.side(ctx.ours[0], ctx.decks[p])
            o = ctx.field[-1]
            r1 = runner.simulate_run(RunSpec(ctx.ruleset, a, o, games, ctx.plan.seed))
            r2 = runner.simulate_run(RunSpec(rs2, a, o, games, ctx.plan.seed))
            differ = int((r1.pair_points != r2.pair_points).sum())
            n = games
    ok = table_equal and digest_equal and differ == 0
    return {"cards": changed, "table_equal": table_equal, "digest_equal": digest_equal,
            "games": n, "differ": differ, "ok": ok,
            "text": (f"{changed} cards' finishes permuted: encoded table "
                     f"{'identical' if table_equal else 'DIFFERENT'}, digest "
                     f"{'identical' if digest_equal else 'DIFFERENT'}; {n:,} games, {differ} differ.")}


def _needs_table(name: str):
    """A store check: the entry holds table ``name`` (else it is damaged)."""
    def parse(manifest: dict, tables: dict):
        from balance.store import Damaged

        if name not in tables:
            raise Damaged(f"{name}.parquet is missing")
        return manifest, tables
    return parse


def _needs_finishes(manifest: dict, tables: dict):
    """A store check: the entry's manifest holds the finishes check."""
    from balance.store import Damaged

    if not isinstance(manifest.get("finishes"), dict):
        raise Damaged("manifest.json lacks the finishes check")
    return manifest, tables


def _stored_finishes(ctx: Context, results, threads, store_only: bool) -> dict:
    """The finishes check, kept in the store like the runs (a report rebuilt
    from the store shows the same check without replaying its games)."""
    from balance.registry import get_game
    from balance.store import Store, config_hash

    store = Store(results)
    key = config_hash({"kind": "trisk-power-finishes",
                       "engine_version": get_game(GAME).engine_module().VERSION,
                       "rules": ctx.ruleset.rules, "card_set_digest": ctx.cardset.digest,
                       "seed": ctx.plan.seed, "games": ctx.plan.finishes_games,
                       "ours": ctx.ours[0].name, "field": ctx.field[-1].name, "format": 1})
    loaded = store.load(GAME, key, parse=_needs_finishes, recompute=not store_only)
    if loaded is not None:
        return loaded[0]["finishes"]
    if store_only:
        raise UserError(f"the finishes check of the power test is not in the store {store.root}; "
                        "run `balance study` (or `balance trisk power`) first")
    fin = finishes_check(ctx, ctx.plan.finishes_games, threads=threads)
    store.save(GAME, key, {"kind": "trisk-power-finishes", "finishes": fin}, {})
    return fin


# =========================================================================== page
def power_section(res: PowerResult, charts: bool = True) -> dict:
    """The page model of a power test (what ``trisk_power.html.j2`` renders);
    the study can embed it."""
    from markupsafe import Markup

    from balance import charts as ch
    from balance import fmt
    from balance.report import _cell, _trusted_svg

    d = res.plan.delta

    def pp_ci(v, lo, hi):
        return fmt.fmt_pp_ci(v, lo, hi)

    def cls(r):
        return {"equal": "pos", "not equal": "neg"}.get(r.verdict, "muted")

    card_rows = []
    for r in res.cards.itertuples():
        cells = [
            _cell(str(r.n_primals), r.n_primals, title=r.primals),
            _cell(pp_ci(r.effect, r.lo, r.hi), r.effect,
                  "neg" if r.lo > d or r.hi < -d else ""),
            _cell(fmt.fmt_int(r.games), r.games),
            _cell(fmt.fmt_p(r.p_holm), r.p_holm),
            _cell(fmt.fmt_p(r.tost_p), r.tost_p),
            _cell(r.verdict + (f" ({r.direction})" if r.direction else ""), r.verdict, cls(r)),
            _cell(fmt.fmt_int(r.games_needed) if r.verdict == "inconclusive" else "", r.games_needed,
                  title="total games of the swapped deck for the test to decide "
                        f"(power {res.plan.power:.0%})"),
            _cell(f"{r.copies:.3g}", r.copies),
            _cell(pp_ci(r.restricted, r.restricted_lo, r.restricted_hi), r.restricted),
            _cell(pp_ci(r.play_value, r.play_lo, r.play_hi), r.play_value),
        ]
        if res.regression is not None:
            cells.append(_cell(pp_ci(getattr(r, "reg_points", math.nan), getattr(r, "reg_lo", math.nan),
                                     getattr(r, "reg_hi", math.nan)), getattr(r, "reg_points", math.nan)))
        card_rows.append({"name": r.card, "cells": cells})
    primal_rows = []
    for r in res.primals.itertuples():
        primal_rows.append({"name": r.primal, "cells": [
            _cell(fmt.fmt_pct_ci(0.5 + r.effect, 0.5 + r.lo, 0.5 + r.hi), r.effect),
            _cell(fmt.fmt_int(r.games), r.games),
            _cell(fmt.fmt_p(r.p_holm), r.p_holm),
            _cell(fmt.fmt_p(r.tost_p), r.tost_p),
            _cell(r.verdict + (f" ({r.direction})" if r.direction else ""), r.verdict, cls(r)),
            _cell(fmt.fmt_int(r.games_needed) if r.verdict == "inconclusive" else "", r.games_needed)]})
    cell_rows = [{"name": r.card, "cells": [_cell(r.primal), _cell(pp_ci(r.effect, r.lo, r.hi), r.effect),
                                             _cell(fmt.fmt_int(r.games), r.games)]}
                 for r in res.cells.itertuples()]
    out: dict[str, Any] = {
        "claim": res.claim, "primal_claim": res.primal_claim,
        "delta_points": f"{d * 100:g}", "alpha": f"{res.plan.alpha:g}", "power": f"{res.plan.power:.0%}",
        "cards": card_rows, "primals": primal_rows, "cells": cell_rows,
        "has_regression": res.regression is not None,
        "regression_info": res.regression_info,
        "decks": res.decks, "finishes": res.finishes, "stages": res.stages,
        "pairing": ({"median": f"{res.pairing['median']:.2f}", "lo": f"{res.pairing['lo']:.2f}",
                     "hi": f"{res.pairing['hi']:.2f}", "strata": res.pairing["strata"],
                     "saving": f"{res.pairing['saving'] * 100:.0f}"} if res.pairing else None),
        "budget_html": Markup(_markdown(res.budget.get("markdown", ""))),
        "budget_points": res.budget.get("points", []),
        "rulings": res.manifest.get("rulings", []),
        "manifest": _manifest_items(res),
        "plan": res.plan,
        "outliers": _outliers(res.cards),
        "chart_cards": None, "chart_primals": None,
    }
    if charts:
        out["chart_cards"] = _trusted_svg("trisk-power-cards", ch.save(
            ch.trisk_power_chart(res.cards.rename(columns={"card": "name"}), d,
                                 "Each card's effect on the score of its deck",
                                 "swap-in − reference deck (points per game)"),
            Path("trisk-power-cards"), write=False))
        out["chart_primals"] = _trusted_svg("trisk-power-primals", ch.save(
            ch.trisk_power_chart(res.primals.rename(columns={"primal": "name"}), d,
                                 "Each Primal's reference deck against the field",
                                 "score − 50% (points per game)"),
            Path("trisk-power-primals"), write=False))
    return out


def _outliers(cards: pd.DataFrame) -> list[str]:
    """One line per direction: the cards shown different, largest first."""
    from balance import fmt

    out = []
    for direction in ("stronger", "weaker"):
        d = cards[(cards["verdict"] == "not equal") & (cards["direction"] == direction)]
        d = d.reindex(d["effect"].abs().sort_values(ascending=False).index)
        if len(d):
            out.append(f"Shown {direction} ({len(d)}): " + ", ".join(
                f"{r.card} {fmt.fmt_pp(r.effect)}" for r in d.itertuples()))
    return out


def _markdown(text: str) -> str:
    """Markdown to HTML with raw HTML disabled (so the file cannot inject
    markup), headings moved under the page's own (h1 → h4)."""
    if not text.strip():
        return ""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return re.sub(r"<(/?)h([1-6])>", lambda m: f"<{m.group(1)}h{min(int(m.group(2)) + 3, 6)}>", html)


def _manifest_items(res: PowerResult) -> list[tuple[str, str, bool]]:
    m = res.manifest
    t = m.get("timings", {})
    return [
        ("Command", str(m.get("command", "")), True),
        ("Seed", str(m.get("seed")), True),
        ("Engine", f"{m.get('engine')} {m.get('engine_version')}", False),
        ("Toolkit", str(m.get("toolkit_version")), False),
        ("Card set", f"{m.get('card_set')} (digest {m.get('card_set_digest')})", False),
        ("Rules", str(m.get("variant")), False),
        ("Plan", f"δ = {res.plan.delta * 100:g} points, α = {res.plan.alpha:g}, strategies "
                 f"{', '.join(res.plan.strategies)} against {', '.join(res.plan.field)} on every "
                 f"reference deck; {res.plan.games:,}–{res.plan.max_games:,} games a run; restricted "
                 f"{res.plan.restricted_games:,}; regression {res.plan.regression_pairs:,} deck pairs × "
                 f"{res.plan.regression_games} games", False),
        ("Runs", f"{t.get('runs_simulated', 0):,} simulated, {t.get('runs_read', 0):,} read from the store", False),
        ("Time", f"{t.get('total_s', 0):.1f} s", False),
        ("Date", str(m.get("date")), False),
    ]


def render_power_page(res: PowerResult) -> str:
    """The self-contained HTML page of a power test."""
    from balance.report import _environment

    return _environment().get_template("trisk_power.html.j2").render(
        title="Trisk: are all cards equal in power?", p=power_section(res))


def write_power_page(res: PowerResult, path: str | Path) -> Path:
    """Render the page and write it atomically to ``path``."""
    from balance.report import _write_html

    return _write_html(Path(path), render_power_page(res))


def result_json(res: PowerResult) -> dict:
    """The CLI's ``--json``: the claim, per-card and per-Primal verdicts."""
    def recs(df: pd.DataFrame | None) -> list[dict]:
        if df is None:
            return []
        out = []
        for rec in df.to_dict(orient="records"):
            out.append({k: (None if isinstance(v, float) and not math.isfinite(v) else
                            (v.item() if isinstance(v, np.generic) else v))
                        for k, v in rec.items() if k not in ("deck_a", "deck_b")})
        return out

    return {"claim": res.claim, "primal_claim": res.primal_claim, "delta": res.plan.delta,
            "alpha": res.plan.alpha, "cards": recs(res.cards), "primals": recs(res.primals),
            "cells": recs(res.cells), "regression": res.regression_info, "finishes": res.finishes,
            "pairing": res.pairing, "stages": res.stages, "manifest": res.manifest}
