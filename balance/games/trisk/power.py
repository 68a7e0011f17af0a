"""The equal-power test of a Trisk card set (``balance trisk power``).

The rulebook claims "Every card is built to be equal in power". That is an
equivalence claim: failing to find a difference proves nothing, so each card
must be *shown* to lie within a margin δ (METHODS.md, "All cards are equal in
power"). Three designs measure a card's power:

* **Swap-in** (causal, paired). For each card c and each Primal P that can
  play it, ``copies`` (default 4: every neutral slot) neutral copies of P's
  reference deck are replaced by c (same deck positions, so the shuffles stay
  paired). That deck and the unswapped reference deck (the *baseline*; with
  ``--vs-card X`` the deck with X swapped in) each play the same field (every
  Primal's reference deck under the field strategies), seat-swapped, each
  stratum (P against one field deck) on its own derived seed
  (:func:`stratum_seed`). The per-deal difference of A's half points, swap −
  baseline, is the card's effect on the score (win + ½ draw) per game. A
  card's effect pools its strata (equally weighted) with a cluster-robust SE
  (:func:`pool_strata`).
* **Restricted play** (Jaffe et al. 2012). The swap-in deck forbidden to play
  c (every copy is drawn and held, never played; the reference deck may hold
  copies already), against the same field on the same seeds: restricted −
  baseline is what the dead copies cost; swap − restricted, per copy, is
  what playing one copy of c is worth.
* **Regression** (observational over random decks). Random legal deck pairs,
  a quasi-binomial logistic regression (statsmodels GLM, scale Pearson χ²/df) of the score on per-card
  count differences plus Primal dummies, with the neutral card as the
  reference level: one coefficient per card, in points per copy.

The verdict per card (:func:`decide`) says what its interval shows, one of
three outcomes for the margin δ: shown inside ("equal": the TOST passes, no
difference detected; "equal within margin": the TOST passes and a difference
is detected too), shown outside ("not equal": the one-sided test of
``|effect| > δ``, Holm-adjusted over all cards, rejects: the interval lies
wholly beyond ±δ), or not shown ("not shown equal": a difference from 0 is
detected, Holm over all cards, but the interval still reaches inside ±δ;
"inconclusive": nothing shown), the last two with the games that would
settle them. A failed TOST alone never makes a card "not equal". The claim
holds iff every card is shown inside (intersection–union test, Berger
1982), does not hold iff some card is shown outside, and is "not shown"
otherwise. The same for the Primals: each reference deck's score against
the field of the others, tested against 50%.

The test is sequential (:func:`sequential`): every card starts at ``games``
per run; the runs of the cards not yet settled ("not shown equal" or
"inconclusive") are extended (at least doubling, the runner's ``extend``)
up to ``max_games``. Every test of a look runs at α / :func:`looks`, so the
whole procedure keeps its error rates at α (measured in
``tests/games/trisk/test_trisk_power_errors.py``); a card keeps the verdict
of the look that settled it. Every run goes through the store, and the
decision to extend depends on stored numbers only, so an interrupted test
rerun reads every finished run and continues where it stopped.

Around the verdicts: each card's effect under a second strategy
(:func:`strategy_check`), off-budget copies of the neutral card that
translate score into budget points (:func:`run_calibration`), restricted play
and the regression.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from balance import charts as ch
from balance import fmt, resources, runner
from balance.config import load_strategy, load_toml, resolve_variant
from balance.errors import UserError
from balance.games.trisk import GAME as _HOME
from balance.games.trisk import cards as trisk_cards
from balance.games.trisk import charts as game_charts
from balance.games.trisk.cards import RANGES, card_points
from balance.registry import get_game
from balance.report import environment, table_cell, trusted_svg, write_html
from balance.runner import RunSpec, provenance, side_record
from balance.stats import holm, tost
from balance.store import Damaged, Store, config_hash, write_text_atomic

GAME = _HOME.name
PLAN_FILE = _HOME.configs / "power.toml"
BUDGET_FILE = _HOME.configs / "BUDGET.md"

VERDICTS = ("equal", "equal within margin", "not equal", "not shown equal", "inconclusive")


# =========================================================================== plan
@dataclass(frozen=True)
class PowerPlan:
    """What ``balance trisk power`` plays (``configs/trisk/power.toml``).

    Margins are stored as fractions of a point of score (``delta = 0.02`` is
    two percentage points); game counts are per run (one card, one Primal,
    one field opponent).
    """

    delta: float = 0.01
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
    copies: int = 4  # neutral copies of each reference deck replaced by the card tested
    check_strategy: str | None = "control"  # each card's effect again under this strategy
    calibration_games: int = 400  # games a run of the off-budget neutral copies (0: none)
    vs_card: str | None = None  # compare every card with this card instead of the deck as is

    def scaled(self, scale: float) -> PowerPlan:
        """Every game and deck-pair count multiplied by ``scale`` (even, ≥ 2)."""
        if not (scale > 0 and math.isfinite(scale)):
            raise UserError(f"--scale must be a positive number, got {scale}")
        return replace(
            self,
            games=_even(self.games * scale),
            max_games=_even(self.max_games * scale),
            restricted_games=_even(self.restricted_games * scale),
            regression_pairs=max(2, int(math.ceil(self.regression_pairs * scale))),
            regression_games=_even(self.regression_games * scale),
            calibration_games=(
                _even(self.calibration_games * scale) if self.calibration_games else 0
            ),
            finishes_games=_even(self.finishes_games * scale),
        )

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["delta_points"] = self.delta * 100
        return d


def _even(x: float) -> int:
    n = max(2, int(math.ceil(x)))
    return n + n % 2


_PLAN_KEYS = {
    "description",
    "variant",
    "delta",
    "alpha",
    "power",
    "seed",
    "strategies",
    "field",
    "games",
    "max_games",
    "restricted_games",
    "regression",
    "finishes",
    "copies",
    "check_strategy",
    "calibration",
}


def _plan_int(path, key: str, value, lo: int = 2) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise UserError(f"{path}: '{key}' must be an integer ≥ {lo}, got {value!r}")
    return value


def _names(path, key: str, value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(v, str) and v.strip() for v in value)
    ):
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
            raise UserError(
                f"{path}: unknown key '{key}'; allowed: {', '.join(sorted(_PLAN_KEYS))}"
            )
    reg = data.get("regression", {})
    fin = data.get("finishes", {})
    cal = data.get("calibration", {})
    for name, table, allowed in (
        ("regression", reg, ("pairs", "games", "strategy")),
        ("finishes", fin, ("games",)),
        ("calibration", cal, ("games",)),
    ):
        if not isinstance(table, dict):
            raise UserError(f"{path}: '{name}' must be a table")
        for key in table:
            if key not in allowed:
                raise UserError(
                    f"{path}: unknown key '{key}' in [{name}]; allowed: {', '.join(allowed)}"
                )
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
    if "games" in cal:
        kw["calibration_games"] = _plan_int(path, "calibration.games", cal["games"], 0)
    if "copies" in data:
        kw["copies"] = _plan_int(path, "copies", data["copies"], 1)
    if "check_strategy" in data:
        v = data["check_strategy"]
        kw["check_strategy"] = None if v in ("", False) else _names(path, "check_strategy", v)[0]
    kw["delta"] = kw.get("delta", PowerPlan.delta * 100)
    for key, value in overrides.items():
        if value is not None:
            kw[key] = value
    kw["delta"] = float(kw["delta"]) / 100.0
    return check_plan(PowerPlan(**kw), str(path))


# the regression's random deck pairs, at most: each is a run of its own (the
# shipped plan has 1,200), so a million is far beyond any useful plan
MAX_REGRESSION_PAIRS = 1_000_000


def check_plan(plan: PowerPlan, where: str = "plan") -> PowerPlan:
    """Refuse a plan no test can run with (one line naming the value)."""
    if not 0 < plan.delta < 0.5:
        raise UserError(
            f"{where}: --delta must be between 0 and 50 points, got {plan.delta * 100:g}"
        )
    if not 0 < plan.alpha < 0.5:
        raise UserError(f"{where}: --alpha must be between 0 and 0.5, got {plan.alpha:g}")
    if not 0 < plan.power < 1:
        raise UserError(f"{where}: power must be between 0 and 1, got {plan.power:g}")
    if not 0 <= plan.seed <= 2**64 - 1:
        raise UserError(f"{where}: --seed must be between 0 and 2**64-1, got {plan.seed}")
    if (
        isinstance(plan.copies, bool)
        or not isinstance(plan.copies, int)
        or not 1 <= plan.copies <= 40
    ):
        raise UserError(f"{where}: --copies must be a whole number from 1 to 40, got {plan.copies}")
    if plan.calibration_games and plan.calibration_games % 2:
        raise UserError(
            f"{where}: calibration games must be an even number (whole seat-swapped "
            f"deals) or 0, got {plan.calibration_games}"
        )
    for key in ("games", "max_games", "restricted_games", "regression_games"):
        v = getattr(plan, key)
        if v < 2 or v % 2:
            raise UserError(
                f"{where}: {key.replace('_', '-')} must be a positive even number "
                f"of games (whole seat-swapped deals), got {v}"
            )
    from balance.runner import MAX_GAMES

    for key in (
        "games",
        "max_games",
        "restricted_games",
        "regression_games",
        "finishes_games",
        "calibration_games",
    ):
        if getattr(plan, key) > MAX_GAMES:  # a run holds at most this many
            raise UserError(
                f"{where}: {key.replace('_', '-')} = {getattr(plan, key):,} games is more "
                f"than one run can hold; at most {MAX_GAMES:,}"
            )
    if plan.regression_pairs > MAX_REGRESSION_PAIRS:
        raise UserError(
            f"{where}: regression pairs = {plan.regression_pairs:,}; at most "
            f"{MAX_REGRESSION_PAIRS:,} (each pair is its own run)"
        )
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
        return {
            "mean": nan,
            "se": nan,
            "sd": nan,
            "se_independent": nan,
            "design_effect": nan,
            "n_deals": 0,
            "n_games": 0,
            "strata": 0,
            "clusters": 0,
        }
    means = np.array([a.mean() for a in arrs])
    ns = np.array([a.size for a in arrs], dtype=float)
    n = int(ns.sum())
    g = int(ns.max())
    mean = float(means.mean())
    if (ns < 2).any():
        se = se_ind = nan
    else:
        u = np.zeros(g)  # each deal cluster's influence on the mean of strata means
        for a, m in zip(arrs, means, strict=False):
            u[: a.size] += (a - m) / (k * a.size)
        se = float(math.sqrt(g / (g - 1) * float(np.sum(u * u))))
        var = np.array([a.var(ddof=1) for a in arrs])
        se_ind = float(math.sqrt(np.sum(var / ns)) / k)
    deff = se * se / (se_ind * se_ind) if se_ind and math.isfinite(se_ind) else nan
    return {
        "mean": mean,
        "se": se,
        "sd": float(se * math.sqrt(g)) if math.isfinite(se) else nan,
        "se_independent": se_ind,
        "design_effect": deff,
        "n_deals": n,
        "n_games": 2 * n,
        "strata": k,
        "clusters": g,
    }


def games_to_decide(
    effect: float,
    sd: float,
    delta: float,
    alpha: float = 0.05,
    power: float = 0.9,
    family: int = 1,
    strata: int = 1,
) -> float:
    """Games (of one side, over all its strata) for a test to settle a card:
    the TOST or the test of ``|effect| > delta``, whichever the estimate
    points to.

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
        Chance of settling the card that the estimate is planned for.
    family : int
        Number of tests in the Holm family; the test of ``|effect| > delta``
        is planned at the strictest Holm step, ``alpha / family``.
    strata : int
        Strata the card's games are spread over (each plays the same number
        of deals).

    Returns
    -------
    float
        With ``|effect| < delta`` (the estimate points inside the margin), the
        games for the TOST to pass when the true effect equals the observed
        one, ``n = (z_{1-α} + z_p)² sd² / (δ - |effect|)²`` deals a stratum
        (``z_{(1+p)/2}`` at an effect of exactly 0, where both one-sided tests
        must pass); with ``|effect| > delta`` (it points outside), the games
        for the one-sided test of ``|effect| > δ`` to reject at ``α /
        family``, ``n = (z_{1-α/family} + z_p)² sd² / (|effect| - δ)²``.
        Games: ``2 n`` a stratum (two a deal, rounded up to a whole deal)
        times ``strata``. ``nan`` when ``sd`` is not known; ``inf`` when no
        number of games settles it (an effect exactly at the margin).
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
    elif a > delta:
        deals = ((float(norm.ppf(1 - alpha / max(family, 1))) + zp) * sd / (a - delta)) ** 2
    else:
        return float("inf")
    return float(2 * math.ceil(deals) * k)


MIN_GAMES = 400  # fewer games of a row than this decide nothing: the plug-in SE of a
#                 handful of paired deals can be near 0 (most deals never draw the card)


def looks(plan: PowerPlan) -> int:
    """How many times the plan may test a card: at ``games`` a run, then at
    every doubling up to ``max_games`` (:func:`next_games` lands on
    power-of-two multiples of ``games``, or on ``max_games``)."""
    k, n = 1, plan.games
    while n < plan.max_games:
        n = min(plan.max_games, n * 2)
        k += 1
    return k


def decide(
    table: pd.DataFrame,
    delta: float,
    alpha: float = 0.05,
    power: float = 0.9,
    min_games: int = MIN_GAMES,
    n_looks: int = 1,
) -> pd.DataFrame:
    """The verdict for every row (a card or a Primal) of an effects table.

    Three tests at the look's level ``alpha / n_looks``, each saying one
    thing: the TOST (shown inside ±δ), the test of ``|effect| > δ`` (shown
    outside ±δ, Holm over the rows) and the two-sided test of 0 (a difference
    detected, Holm over the rows). A row shown neither inside nor outside is
    not called either.

    Parameters
    ----------
    table : DataFrame
        Columns ``effect`` (difference from the reference: 0 for a card's
        effect, 50% for a Primal's score), ``se``, ``sd`` (per deal) and
        ``games`` (games of the side tested, all strata together).
    delta, alpha, power : float
        Margin, level, and the power the games needed are planned for.
    n_looks : int
        How often the sequential plan may test a row (:func:`looks`). Every
        test of a look runs at ``alpha / n_looks`` (Bonferroni over looks:
        each look spends an equal share of α), so over all looks a card at
        exactly ±δ is wrongly called equal, a family of cards all within ±δ
        has any card wrongly called not equal, and a family of cards all at 0
        has any card wrongly called different, each with probability at most
        α whatever the data decide about extending (the union bound; measured
        in ``tests/games/trisk/test_trisk_power_errors.py``).

    Returns
    -------
    DataFrame
        A copy with ``lo``/``hi`` (95% CI), ``p`` (two-sided normal test of
        0), ``p_holm`` and ``significant`` (Holm over every row at the look's
        level), ``tost_p``, ``lo90``/``hi90`` (the ``1 - 2·alpha_look``
        interval ``effect ± z_{1-alpha_look}·se``) and ``equivalent`` (TOST
        at ``delta``: that interval wholly inside ±δ), ``out_p`` (one-sided
        normal test of H0 ``|effect| <= delta`` against ``|effect| > delta``:
        ``sf((|effect| - delta) / se)``; unadjusted, it rejects exactly when
        ``lo90``/``hi90`` lies wholly beyond one bound), ``out_p_holm`` and
        ``outside`` (Holm over every row at the look's level), ``verdict``:

        * "equal": the TOST passes and no difference is detected;
        * "equal within margin": the TOST passes and the difference test
          rejects too ("equal within ±δ but detectably stronger/weaker");
        * "not equal": the test of ``|effect| > delta`` rejects (Holm): the
          interval lies wholly beyond ±δ;
        * "not shown equal": a difference from 0 is detected, but the row is
          shown neither inside nor outside ±δ (its interval reaches inside
          the margin, or it lies beyond it only before Holm);
        * "inconclusive": none of these, or fewer than ``min_games`` games;

        ``direction`` ("stronger" / "weaker" whenever a difference from 0 or
        beyond δ is shown), ``label`` (the verdict in words), ``alpha_look``
        (the level each test of this look used), ``games_needed`` (total games
        of the tested side that would settle a "not shown equal" or
        "inconclusive" row, see :func:`games_to_decide`) and ``more_games``
        (that minus ``games``).

    Notes
    -----
    At ``|effect| = delta`` the test of ``|effect| > delta`` rejects with
    probability ``Φ(-z) + Φ(-z - 2δ/se)`` (``z = z_{1-alpha_look}``; the
    second term is an estimate beyond the far bound): above ``alpha_look``
    only by a term that is negligible once ``se`` is a fraction of δ (under
    1e-9 at ``se = δ/2``, about the default plan's first look).
    """

    norm = _norm()
    a_look = alpha / max(int(n_looks), 1)
    out = table.copy()
    eff = out["effect"].to_numpy(float)
    se = out["se"].to_numpy(float)
    finite = np.isfinite(eff) & np.isfinite(se)
    out["lo"] = eff - _Z95 * se
    out["hi"] = eff + _Z95 * se
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2 * norm.sf(np.abs(eff) / se), np.where(eff == 0, 1.0, 0.0))
        # beyond the margin: H0 |effect| <= delta, one-sided normal test of |effect| - delta
        p_out = np.where(
            se > 0, norm.sf((np.abs(eff) - delta) / se), np.where(np.abs(eff) > delta, 0.0, 1.0)
        )
    p = np.where(finite, p, np.nan)
    p_out = np.where(finite, p_out, np.nan)
    out["p"] = p
    reject, p_adj = holm(p, a_look)
    out["p_holm"] = p_adj
    out["significant"] = reject
    tosts = [tost(m, s, delta, alpha=a_look) for m, s in zip(eff, se, strict=False)]
    out["tost_p"] = [t["p"] for t in tosts]
    out["lo90"] = [t["lo90"] for t in tosts]
    out["hi90"] = [t["hi90"] for t in tosts]
    out["equivalent"] = [t["equivalent"] for t in tosts]
    out["out_p"] = p_out
    out_reject, out_adj = holm(p_out, a_look)
    out["out_p_holm"] = out_adj
    out["outside"] = out_reject
    out["alpha_look"] = a_look
    enough = out["games"].to_numpy(float) >= min_games
    sig = out["significant"].to_numpy(bool) & enough
    eq = out["equivalent"].to_numpy(bool) & enough
    beyond = out["outside"].to_numpy(bool) & enough
    verdict = np.select(
        [eq & sig, eq, beyond, sig],
        ["equal within margin", "equal", "not equal", "not shown equal"],
        "inconclusive",
    )
    out["verdict"] = verdict
    out["direction"] = np.where(sig | beyond, np.where(eff > 0, "stronger", "weaker"), "")
    family = int(np.isfinite(p_out).sum())
    strata = out["strata"].to_numpy(float) if "strata" in out.columns else np.ones(len(out))
    needed = [
        max(games_to_decide(m, s, delta, a_look, power, family, int(k)), float(min_games))
        if v in ("inconclusive", "not shown equal")
        else float("nan")
        for m, s, v, k in zip(eff, out["sd"].to_numpy(float), verdict, strata, strict=False)
    ]
    out["games_needed"] = needed
    out["more_games"] = np.maximum(np.asarray(needed) - out["games"].to_numpy(float), 0)
    lo90 = out["lo90"].to_numpy(float)
    hi90 = out["hi90"].to_numpy(float)
    # a "not shown equal" row whose interval is wholly beyond ±δ was held back by Holm alone
    inside = ~((lo90 > delta) | (hi90 < -delta))
    out["label"] = [
        label(v, d, delta, g, reaches_inside=bool(i))
        for v, d, g, i in zip(verdict, out["direction"], needed, inside, strict=False)
    ]
    return out


def label(
    verdict: str,
    direction: str,
    delta: float,
    games_needed: float = math.nan,
    reaches_inside: bool = True,
) -> str:
    """A verdict in words: what was shown, and for a row not settled, the
    games that would settle it.

    ``reaches_inside``: for "not shown equal", whether the row's interval
    reaches inside ±δ (else it lies beyond, but Holm over the rows does not
    confirm it)."""

    m = f"±{delta * 100:g} pt"
    need = (
        f" ({fmt.fmt_int(games_needed)} games needed)"
        if isinstance(games_needed, (int, float)) and math.isfinite(games_needed)
        else ""
    )
    if verdict == "equal within margin":
        return f"equal within {m} but detectably {direction}"
    if verdict == "not equal":
        return f"not equal: {direction} by more than {delta * 100:g} pt"
    if verdict == "not shown equal":
        why = f"interval reaches inside {m}" if reaches_inside else f"beyond {m} only before Holm"
        return f"not shown equal: detectably {direction}, {why}{need}"
    if verdict == "inconclusive":
        return f"inconclusive{need}"
    return verdict


def claim(verdicts: Iterable[str], what: str = "cards") -> dict[str, Any]:
    """The overall claim "all <what> are equal in power" from per-row verdicts.

    Returns
    -------
    dict
        ``status``: "holds" (every row shown inside the margin: "equal" or
        "equal within margin"; the intersection–union test rejects at the
        rows' own level), "does not hold" (some row shown outside it: "not
        equal"), or "not shown" (neither: some row "not shown equal" or
        "inconclusive", none "not equal"; also for no rows); ``counts`` per
        verdict (every label of :data:`VERDICTS`); ``n``; ``text``: one
        sentence.
    """
    vs = list(verdicts)
    counts = {v: vs.count(v) for v in VERDICTS}
    n = len(vs)
    shown = counts["equal"] + counts["equal within margin"]
    within = (
        f" ({counts['equal within margin']} of them detectably different, within the margin)"
        if counts["equal within margin"]
        else ""
    )
    parts = [
        f"{shown} shown equal{within}" if shown else "",
        (
            f"{counts['not shown equal']} not shown equal (a difference detected, the "
            "interval reaching inside the margin)"
            if counts["not shown equal"]
            else ""
        ),
        f"{counts['inconclusive']} inconclusive" if counts["inconclusive"] else "",
    ]
    rest = ", ".join(p for p in parts if p)
    if n and shown == n:
        status = "holds"
        text = (
            f"The claim holds: all {n} {what} are shown equal in power within the margin{within}."
        )
    elif counts["not equal"]:
        status = "does not hold"
        text = (
            f"The claim does not hold: {counts['not equal']} of {n} {what} shown outside "
            f"the margin (not equal){'; ' + rest if rest else ''}."
        )
    elif n:
        status = "not shown"
        text = (
            f"Not shown: of {n} {what}, {rest}; none shown outside the margin "
            "(more games would settle the rest)."
        )
    else:
        status = "not shown"
        text = f"Not shown: no {what} tested."
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
    """A row whose difference from 0 is detected but whose interval still
    reaches inside ±δ (verdict "not shown equal"): neither equality nor a
    difference beyond the margin is shown, and more games may show either."""
    return r.verdict == "not shown equal"


def next_games(n: int, games: float, needed: float, max_games: int) -> int:
    """The next run size of an undecided card: at least double, enough for
    ``needed`` total games if ``n`` per run gives ``games``, a power-of-two
    multiple of ``n`` (so reruns land on the same sizes), at most ``max_games``."""
    factor = needed / games if (math.isfinite(needed) and games > 0) else 2.0
    k = max(1, math.ceil(math.log2(max(factor, 2.0))))
    return int(min(max_games, n * 2**k))


def next_stage(table: pd.DataFrame, n_of: dict, plan: PowerPlan) -> set:
    """The rows that play on after a look, their next run size set in ``n_of``
    (row -> games a run): every row not yet settled, that is "inconclusive"
    or "not shown equal" (:func:`_straddles`: a difference detected, the
    interval still reaching inside ±δ), until ``max_games``. A row shown equal
    or shown beyond the margin stops. Every look is tested at ``alpha /
    looks(plan)`` (:func:`decide`), which is what makes playing on by the
    data's say valid."""
    active = set()
    for r in table.itertuples():
        if (r.verdict == "inconclusive" or _straddles(r, plan.delta)) and n_of[
            r.row
        ] < plan.max_games:
            n_of[r.row] = next_games(n_of[r.row], r.games, r.games_needed, plan.max_games)
            active.add(r.row)
    return active


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
    vs: int | None = None  # --vs-card: the card every card is compared with (None: the deck as is)
    # each run's spec, made once (:func:`_spec`): the sides it binds are then the same
    # objects every time, so :meth:`_Runs.ident` knows them again
    specs: dict = field(default_factory=dict, repr=False, compare=False)

    def name(self, row: int) -> str:
        return str(self.cardset.names[row])

    def side(self, strategy, deck):
        return strategy.with_deck(deck, len(self.cardset.names))


def plan_cells(
    cs,
    decks: Mapping[int, Any],
    subset: Sequence[str] | None = None,
    what: str = "--cards",
    exclude: int | None = None,
) -> tuple[list[int], list[tuple[int, int]]]:
    """The cards tested and their cells ``(card row, Primal row)``: every
    non-neutral, non-Primal card, with every Primal whose reference deck can
    play it. ``subset`` restricts to those card names (a user error names an
    unknown or untestable one)."""
    testable = [r for r in range(len(cs.names)) if r != cs.neutral and cs.type_of(r) != "Primal"]
    if subset is not None:
        rows = []
        for name in subset:
            try:
                r = cs.row(name)
            except (KeyError, ValueError, UserError):
                r = None
            if r is None or r not in testable:
                why = (
                    "the neutral card is the reference"
                    if r == cs.neutral
                    else "a Primal leads a deck, it is not swapped in"
                    if r is not None
                    else "no such card"
                )
                raise UserError(
                    f"{what}: '{name}' cannot be tested ({why}); a card is one of: "
                    f"{', '.join(cs.names[x] for x in testable)}"
                )
            if r not in rows:
                rows.append(r)
        testable = sorted(rows)
    if exclude is not None:
        testable = [r for r in testable if r != exclude]
    cells = []
    for r in testable:
        for p in sorted(decks):
            if r in set(int(x) for x in cs.playable(p)):
                cells.append((r, p))
    return testable, cells


def build_context(plan: PowerPlan) -> Context:
    """Load the ruleset, card set, reference decks and strategies of ``plan``."""

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
    short = [d.name for d in decks.values() if d.cards.count(d.neutral) < plan.copies]
    if short:
        have = min(decks[p].cards.count(decks[p].neutral) for p in decks)
        raise UserError(
            f"--copies {plan.copies}: reference deck '{short[0]}' has only {have} "
            f"neutral cop{'y' if have == 1 else 'ies'} to swap out; allowed 1..{have}"
        )
    if plan.check_strategy is not None:
        load_strategy(GAME, plan.check_strategy)  # an unknown name is refused before any work
    vs = None
    if plan.vs_card is not None:
        vs = plan_cells(cs, decks, [plan.vs_card], what="--vs-card")[0][0]
    cards, cells = plan_cells(cs, decks, plan.cards, exclude=vs)
    if vs is not None:  # only the Primals that can play both
        cells = [(c, p) for (c, p) in cells if vs in {int(x) for x in cs.playable(p)}]
        cards = [c for c in cards if any(cc == c for cc, _ in cells)]
    if not cells:
        raise UserError(
            "no card of the set can be swapped into a reference deck"
            + (f" that can also play '{plan.vs_card}'" if vs is not None else "")
        )
    return Context(plan, rs, cs, decks, ours, field_sides, cells, cards, vs)


def _ident(spec) -> str:
    """A run's identity without its size (a run and its extensions share it).

    Within one test the ruleset and card set are fixed, so the sides, seed and
    rules name a run; this avoids re-reading the card set for every lookup."""

    return config_hash(
        {
            "rules": spec.ruleset.rules,
            "variant": spec.ruleset.name,
            "a": side_record(spec.a),
            "b": side_record(spec.b),
            "seed": spec.seed,
            "per_game": spec.per_game,
        }
    )


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
        self._idents: dict[tuple, tuple] = {}

    def ident(self, spec) -> str:
        """:func:`_ident`, hashed once per pair of side objects: a test looks each
        run up many times (every look, table and check), and :func:`_spec` hands
        out the same sides each time. The sides and rules are held here, so an
        id is never another object's while its entry lives."""
        k = (id(spec.ruleset), id(spec.a), id(spec.b), spec.seed, spec.per_game)
        hit = self._idents.get(k)
        if (
            hit is None
            or hit[0] is not spec.ruleset
            or hit[1] is not spec.a
            or hit[2] is not spec.b
        ):
            hit = (spec.ruleset, spec.a, spec.b, _ident(spec))
            self._idents[k] = hit
        return hit[3]

    def run(self, specs: list, label: str) -> None:

        todo, extend = [], {}
        for s in specs:
            prev = self.have.get(self.ident(s))
            if prev is not None and prev.games >= s.n_games:
                continue
            if prev is not None:
                extend[len(todo)] = prev
            todo.append(s)
        if not todo:
            return
        res = runner.run_many(
            todo,
            store=self.store,
            threads=self.threads,
            progress=self.progress,
            label=label,
            extend=extend,
            store_only=self.store_only,
        )
        for r in res:
            self.have[self.ident(r.spec)] = r
            if r.cached:
                self.read += 1
            else:
                self.simulated += 1

    def get(self, spec):
        return self.have[self.ident(spec)]


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
    calibration: dict | None = None  # budget points ↔ score (run_calibration)
    vs_card: str | None = None  # every card compared with this one (--vs-card)
    header: str = ""  # the set and plan in one line
    looks: int = 1  # the most looks the plan allowed


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
    return _splitmix(
        _splitmix(_splitmix(int(seed)) ^ (int(primal) + 1)) ^ ((int(opponent) + 1) << 20)
    )


def _seed(ctx: Context, p: int, o) -> int:
    q = int(o.deck.primal) if o.deck is not None else 0
    return stratum_seed(ctx.plan.seed, p, q)


def _spec(ctx: Context, kind: str, s, c, p: int, o, n: int, make: Callable):
    """The run of ``make(n)`` (our strategy ``s`` with Primal ``p``'s deck as
    changed by ``kind`` and card ``c``, against ``o``): built and bound once
    per context, then resized, each size once (a size is a new RunSpec, whose
    sides are bound again and its key hashed again: the test asks for each
    run several times a look, and a report of the study's test read 10,680
    runs through 61,000 of them). Keyed by the sides' ids, which the entry
    holds."""
    k = (kind, id(s), c, p, id(o))
    hit = ctx.specs.get(k)
    if hit is None or hit[0] is not s or hit[1] is not o:
        hit = (s, o, {})
        ctx.specs[k] = hit
    sized = hit[2]
    spec = sized.get(n)
    if spec is None:
        spec = sized[n] = replace(next(iter(sized.values())), n_games=n) if sized else make(n)
    return spec


def _swap_spec(ctx: Context, s, c: int, p: int, o, n: int):
    def make(n: int):
        a = ctx.side(s, ctx.decks[p].swap_in(c, ctx.plan.copies))
        return RunSpec(ctx.ruleset, a, o, n, _seed(ctx, p, o))

    return _spec(ctx, "swap", s, c, p, o, n, make)


def _base_spec(ctx: Context, s, p: int, o, n: int):
    def make(n: int):
        return RunSpec(ctx.ruleset, ctx.side(s, ctx.decks[p]), o, n, _seed(ctx, p, o))

    return _spec(ctx, "base", s, None, p, o, n, make)


def _ref_spec(ctx: Context, s, p: int, o, n: int):
    """What a card is compared with: the reference deck, or with ``--vs-card X``
    the reference deck with X swapped in the same way."""
    if ctx.vs is None:
        return _base_spec(ctx, s, p, o, n)
    return _swap_spec(ctx, s, ctx.vs, p, o, n)


def _restricted_spec(ctx: Context, s, c: int, p: int, o, n: int):
    def make(n: int):
        a = ctx.side(s, ctx.decks[p].swap_in(c, ctx.plan.copies))
        return RunSpec(ctx.ruleset, a.restricted_card(c, ctx.name(c)), o, n, _seed(ctx, p, o))

    return _spec(ctx, "restricted", s, c, p, o, n, make)


def _mirror(ctx: Context, s, p: int, o) -> bool:
    return o.deck is not None and int(o.deck.primal) == p and o.spec == s.spec


def _cell_strata(ctx, runs: _Runs, c: int, p: int, n: int, kind: str = "swap", ours=None):
    """Per-deal differences of one cell, one array per (strategy, opponent),
    and the pairing ratio of each (``ours``: other strategies than the plan's)."""
    diffs, ratios = [], []
    for s in ctx.ours if ours is None else ours:
        for o in ctx.field:
            base = runs.get(_ref_spec(ctx, s, p, o, 2)).pair_points.astype(float)
            if kind == "swap":
                x = runs.get(_swap_spec(ctx, s, c, p, o, 2)).pair_points.astype(float)
            else:
                x = runs.get(_restricted_spec(ctx, s, c, p, o, 2)).pair_points.astype(float)
            k = min(len(x), len(base), n // 2)
            diffs.append((x[:k] - base[:k]) / 4)
            ratios.append(pairing_ratio(x[:k], base[:k]))
    return diffs, ratios


def _primal_strata(ctx, runs: _Runs, p: int, n: int) -> list[np.ndarray]:
    """The reference deck's per-deal score − ½ against each field deck, its
    first ``n`` games (the look's data)."""
    out = []
    for s in ctx.ours:
        for o in ctx.field:
            if _mirror(ctx, s, p, o):
                continue  # a deck against itself scores 50% by symmetry
            pts = runs.get(_base_spec(ctx, s, p, o, 2)).pair_points.astype(float)
            out.append(pts[: n // 2] / 4 - 0.5)
    return out


def _card_tables(ctx: Context, runs: _Runs, n_card: dict[int, int]):
    cell_rows, card_rows, ratios = [], [], []
    for c in ctx.cards:
        strata = []
        for cc, p in ctx.cells:
            if cc != c:
                continue
            diffs, r = _cell_strata(ctx, runs, c, p, n_card[c])
            ratios += r
            st = pool_strata(diffs)
            cell_rows.append(
                {
                    "card": ctx.name(c),
                    "row": c,
                    "primal": ctx.name(p),
                    "primal_row": p,
                    "effect": st["mean"],
                    "se": st["se"],
                    "lo": st["mean"] - _Z95 * st["se"],
                    "hi": st["mean"] + _Z95 * st["se"],
                    "games": st["n_games"],
                }
            )
            strata += diffs
        st = pool_strata(strata)
        prim = [ctx.name(p) for (cc, p) in ctx.cells if cc == c]
        card_rows.append(
            {
                "card": ctx.name(c),
                "row": c,
                "primals": ", ".join(prim),
                "n_primals": len(prim),
                "effect": st["mean"],
                "se": st["se"],
                "sd": st["sd"],
                "games": st["n_games"],
                "games_per_run": n_card[c],
                "strata": st["strata"],
                "design_effect": st["design_effect"],
            }
        )
    return pd.DataFrame(cell_rows), pd.DataFrame(card_rows), ratios


def _primal_table(ctx: Context, runs: _Runs, n_base: dict[int, int]) -> pd.DataFrame:
    rows = []
    for p in sorted(ctx.decks):
        st = pool_strata(_primal_strata(ctx, runs, p, n_base[p]))
        rows.append(
            {
                "primal": ctx.name(p),
                "row": p,
                "deck": ctx.decks[p].name,
                "effect": st["mean"],
                "se": st["se"],
                "sd": st["sd"],
                "games": st["n_games"],
                "games_per_run": n_base[p],
                "strata": st["strata"],
                "design_effect": st["design_effect"],
            }
        )
    return pd.DataFrame(rows)


def header(ctx: Context) -> str:
    """One line naming the set under test and the plan (the CLI prints it first)."""
    plan, cs = ctx.plan, ctx.cardset
    vs = f", each against {ctx.name(ctx.vs)}" if ctx.vs is not None else ""
    return (
        f"Equal-power test of card set '{cs.name}' ({cs.path.name}, digest {cs.digest[:12]}): "
        f"{len(ctx.cards)} cards{vs}, {plan.copies} neutral "
        f"cop{'y' if plan.copies == 1 else 'ies'} of {len(ctx.decks)} reference decks swapped "
        f"out; {'+'.join(plan.strategies)} against {len(ctx.field)} field decks "
        f"({'+'.join(plan.field)}); δ = ±{plan.delta * 100:g} pt of score, α = {plan.alpha:g} spent "
        f"over at most {looks(plan)} looks ({plan.games:,} to {plan.max_games:,} games a run); "
        f"rules '{ctx.ruleset.name}', seed {plan.seed}"
    )


def sequential(
    plan: PowerPlan,
    rows: Sequence[int],
    measure: Callable[[dict, set, int], pd.DataFrame],
    log: Callable[[dict], None] | None = None,
    n_looks: int | None = None,
) -> tuple[pd.DataFrame, list[dict], dict]:
    """The staged test: look, decide, play on, until every row is decided or
    at ``max_games``.

    Parameters
    ----------
    plan : PowerPlan
    rows : sequence of int
        The rows under test (cards or Primals).
    measure : callable
        ``measure(n_of, active, look)`` plays (or reads) what the look needs,
        the rows in ``active`` at ``n_of[row]`` games a run, and returns the
        effects table of every row (columns ``row``, ``effect``, ``se``,
        ``sd``, ``games``, ``strata``; a row's data are its first
        ``n_of[row]`` games a run).
    log : callable, optional
        Gets each look's summary.
    n_looks : int, optional
        The α split (default :func:`looks`; 1 replays the uncorrected
        procedure, for the tests that show it fails).

    Returns
    -------
    (table, looks, n_of)
        Every row's verdict from the look at which it stopped (a decided row
        keeps its verdict: it is never re-tested on the same data), the
        looks' summaries, and each row's final games a run.

    Every look tests at ``alpha / looks(plan)`` (:func:`decide`); which rows
    play on is :func:`next_stage`. This is the function the error-rate tests
    drive with synthetic strata.
    """
    n_of = {r: plan.games for r in rows}
    active = set(rows)
    frozen: dict[int, dict] = {}
    out: list[dict] = []
    K = looks(plan) if n_looks is None else int(n_looks)
    look = 0
    while True:
        table = decide(measure(n_of, active, look), plan.delta, plan.alpha, plan.power, n_looks=K)
        sizes = sorted({n_of[r] for r in active})
        nxt = next_stage(table, n_of, plan)
        for rec in table.to_dict(orient="records"):
            if rec["row"] not in nxt and rec["row"] not in frozen:
                frozen[rec["row"]] = rec
        now = [frozen.get(r, {}).get("verdict") for r in rows]
        st = {
            "look": look + 1,
            "run": len(active),
            "games_per_run": sizes,
            "alpha_look": plan.alpha / K,
            "playing_on": len(nxt),
            **{v: int(sum(1 for x in now if x == v)) for v in VERDICTS},
        }
        out.append(st)
        if log is not None:
            log(st)
        if not nxt:
            break
        active = nxt
        look += 1
    return pd.DataFrame([frozen[r] for r in rows]), out, n_of


def play_cards(ctx: Context, runs: _Runs, n_card: dict, active, what: str, each=None) -> None:
    """Play (or read) the reference decks' runs and, card by card (so an
    interruption leaves whole cards stored), the swap-in runs of the cards in
    ``active`` at ``n_card[card]`` games a run; ``each()`` after every card."""
    refs = {}
    for c, p in ctx.cells:
        refs[p] = max(refs.get(p, 0), n_card[c])
    ref = [
        _ref_spec(ctx, s, p, o, refs[p]) for p in sorted(refs) for s in ctx.ours for o in ctx.field
    ]
    runs.run(ref, f"trisk power: {what}, reference decks")
    for c in ctx.cards:
        if c not in active:
            continue
        specs = [
            _swap_spec(ctx, s, c, p, o, n_card[c])
            for (cc, p) in ctx.cells
            if cc == c
            for s in ctx.ours
            for o in ctx.field
        ]
        runs.run(specs, f"trisk power: {what}, {ctx.name(c)}")
        if each is not None:
            each()


def card_effects(
    plan: PowerPlan, *, results=None, threads=None, progress: bool = True, store_only=False
) -> tuple[pd.DataFrame, list[str]]:
    """Each card's swap-in effect at ``plan.games`` games a run, one look (no
    sequential decision, Primals, restricted play, checks or calibration):
    columns ``card``, ``row``, ``effect``, ``se``, ``lo``, ``hi`` (95%,
    clustered by stratum like the test's own) and ``games``; and the keys
    of the runs played. What a repair targets (``docs/repair.md``)."""
    ctx = build_context(plan)
    runs = _Runs(Store(results), threads, progress, store_only)
    n_card = dict.fromkeys(ctx.cards, plan.games)
    play_cards(ctx, runs, n_card, set(ctx.cards), "card effects")
    _, table, _ = _card_tables(ctx, runs, n_card)
    table["lo"] = table["effect"] - _Z95 * table["se"]
    table["hi"] = table["effect"] + _Z95 * table["se"]
    return table, [r.key for r in runs.have.values()]


def run_power(
    plan: PowerPlan,
    *,
    results: str | Path | None = None,
    threads: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    regression: bool = True,
    finishes: bool = True,
    stop_after: int | None = None,
    store_only: bool = False,
) -> PowerResult:
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

    t0 = time.perf_counter()
    say = log or (lambda _line: None)
    ctx = build_context(plan)
    runs = _Runs(Store(results), threads, progress, store_only)
    K = looks(plan)
    say(header(ctx))
    last: dict[str, Any] = {}
    done = [0]

    def measure_cards(n_card: dict, active: set, stage: int) -> pd.DataFrame:
        def each_card() -> None:
            done[0] += 1
            if stop_after is not None and stage == 0 and done[0] >= stop_after:
                raise KeyboardInterrupt(f"stopped after {done[0]} cards (stop_after)")

        play_cards(ctx, runs, n_card, active, f"look {stage + 1}", each_card)
        last["cells"], table, last["ratios"] = _card_tables(ctx, runs, n_card)
        return table

    def log_look(what: str):
        def f(st: dict) -> None:
            # every verdict count, or what the look leaves open (never a blank line end)
            counts = ", ".join(f"{st[v]} {v}" for v in VERDICTS if st[v]) or "none decided yet"
            say(
                f"{what}, look {st['look']} of at most {K}: {st['run']} at "
                f"{', '.join(map(str, st['games_per_run']))} games a run → {counts}"
            )

        return f

    cards, stages, _ = sequential(plan, ctx.cards, measure_cards, log_look("cards"))
    cells, ratios = last["cells"], last["ratios"]

    def measure_primals(n_primal: dict, active: set, stage: int) -> pd.DataFrame:
        runs.run(
            [
                _base_spec(ctx, s, p, o, n_primal[p])
                for p in sorted(active)
                for s in ctx.ours
                for o in ctx.field
            ],
            f"trisk power: look {stage + 1}, Primals",
        )
        return _primal_table(ctx, runs, n_primal)

    primals, p_stages, _ = sequential(plan, sorted(ctx.decks), measure_primals, log_look("Primals"))
    for st in p_stages:
        st["what"] = "Primals"
    stages = stages + p_stages

    # restricted play: the swap-in deck forbidden to play the card
    nr = min(plan.restricted_games, plan.games)  # paired with the first games of every run
    rspecs = [
        _restricted_spec(ctx, s, c, p, o, nr)
        for (c, p) in ctx.cells
        for s in ctx.ours
        for o in ctx.field
    ]
    runs.run(rspecs, "trisk power: restricted play")
    cards = _add_restricted(ctx, runs, cards, nr)
    if plan.check_strategy is not None:
        cards = strategy_check(ctx, runs, cards)
    calibration = None
    if plan.calibration_games and ctx.vs is None:
        calibration = run_calibration(ctx, runs, runs.store.root, cards)
        for line in calibration_lines(calibration, plan):
            say(line)
        cards = cards.merge(_budget_columns(calibration), on="row", how="left")

    reg, reg_info = None, {}
    if regression and plan.regression_pairs > 0:
        reg, reg_info = run_regression(
            ctx, results=results, threads=threads, progress=progress, store_only=store_only, log=say
        )
        cards = cards.merge(
            reg[["row", "reg_points", "reg_lo", "reg_hi", "reg_p"]], on="row", how="left"
        )
    fin = None
    if finishes and plan.finishes_games:
        fin = _stored_finishes(ctx, results, threads, store_only)

    ratios = np.asarray([r for r in ratios if np.isfinite(r)])
    pairing = {}
    if ratios.size:
        med = float(np.median(ratios))
        pairing = {
            "median": med,
            "lo": float(ratios.min()),
            "hi": float(ratios.max()),
            "strata": int(ratios.size),
            "saving": 1 - med**2,
        }
    cards = cards.sort_values("effect", ascending=False, kind="stable").reset_index(drop=True)
    if not store_only:  # the experiment: this plan and the runs its figures come from
        from dataclasses import asdict

        from balance import experiments

        experiments.record(
            results,
            GAME,
            "power",
            {
                **asdict(plan),
                "variant": experiments.ruleset_plan(ctx.ruleset),
                "card_set_digest": ctx.cardset.digest,
                "regression": regression,
                "finishes": finishes,
            },
            [r.key for r in runs.have.values()],
            view="runs",
        )
    elapsed = time.perf_counter() - t0
    return PowerResult(
        plan=plan,
        cards=cards,
        cells=cells,
        primals=primals,
        regression=reg,
        regression_info=reg_info,
        finishes=fin,
        claim=claim(cards["verdict"], "cards"),
        primal_claim=claim(primals["verdict"], "Primals"),
        decks=_deck_rows(ctx),
        pairing=pairing,
        stages=stages,
        manifest=_power_manifest(ctx, elapsed, runs, threads),
        runs_simulated=runs.simulated,
        runs_read=runs.read,
        budget=_budget(ctx),
        calibration=calibration,
        vs_card=ctx.name(ctx.vs) if ctx.vs is not None else None,
        header=header(ctx),
        looks=looks(plan),
    )


# =========================================================================== calibration
# Off-budget copies of the neutral card, one stat changed each (a change of
# the neutral's value; ``flying`` 1 gives it Flying, ``attack`` moves its
# Attack's unlock level). Priced by the reference budget (hp 1, ap 2, mp 1,
# armor 2, flying 3 points, 0.5 a level of unlock) they are −8, −4, +4 (HP),
# −4, −2, +2, +4 (AP), +3 (MP), +2 (Armor), +3 (Flying), +0.5 and −1 (Attack
# level 1 and 4) budget points. The stats are those the reference cards differ
# by from the neutral (HP 7–16, AP 1–5, MP 0–4, Armor 0–3, Flying, Attack at
# 0–4 against 15, 3, 0, 0, no, 2); both sides where the neutral can move both
# ways (MP, Armor and Flying are at their floor). The sizes are the reference
# cards' typical distance from the neutral, and large enough that each side's
# rate is measured at the default plan (issue 42: +1 AP alone moved the score
# −0.19 [−0.83, +0.45] points under tempo, so AP up is also measured at +2).
# At the default plan (400 games a run, seed 5) every side's rate excludes 0;
# the whole calibration, 13 decks × 100 strata × 400 games, took 71 s here.
CALIBRATION = (
    {"hp": -8},
    {"hp": -4},
    {"hp": 4},
    {"ap": -2},
    {"ap": -1},
    {"ap": 1},
    {"ap": 2},
    {"mp": 3},
    {"armor": 1},
    {"flying": 1},
    {"attack": -1},
    {"attack": 2},
)
CAL_STATS = ("hp", "ap", "mp", "armor", "flying", "attack")
_STAT_LABEL = game_charts.CAL_LABEL


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list) and all(not isinstance(x, (list, dict)) for x in v):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise ValueError(f"cannot write {v!r} as a TOML value")


def _changed(base: dict, changes: Mapping[str, int]) -> dict | None:
    """The neutral's fields after ``changes`` (None when one leaves the
    format's ranges, or the neutral has no Attack to move)."""
    new = {}
    for k, d in changes.items():
        if k == "flying":
            v = int(bool(base["flying"])) + int(d)
            if v not in (0, 1):
                return None
            new[k] = bool(v)
            continue
        if base.get(k) is None:
            return None
        v = int(base[k]) + int(d)
        if not RANGES[k][0] <= v <= RANGES[k][1]:
            return None
        new[k] = v
    return new


def _cal_label(base: dict, changes: Mapping[str, int], new: dict) -> str:
    parts = []
    for k, d in changes.items():
        if k == "flying":
            parts.append("Flying" if new[k] else "no Flying")
        elif k == "attack":
            parts.append(f"Attack at {new[k]}")
        else:
            parts.append(f"{int(d):+d} {_STAT_LABEL[k]}")
    return " ".join(parts)


def calibration_cards(cs) -> list[dict]:
    """The off-budget copies of the set's neutral card (:data:`CALIBRATION`):
    ``name``, ``changes``, ``stat`` (the one stat changed, else ``None``),
    ``budget`` (points off the neutral's) and the raw ``card`` table to add to
    the set. A copy whose stats would leave the format's ranges is skipped."""

    doc = load_toml(cs.path)
    raw = next(c for c in doc["card"] if c.get("name") == cs.names[cs.neutral])
    base = cs.cards[cs.neutral]
    next_id = max(int(c.get("id", 0)) for c in doc["card"]) + 1
    out = []
    for changes in CALIBRATION:
        new = _changed(base, changes)
        if new is None:
            continue
        card = {**raw, **new}
        label = _cal_label(base, changes, new)
        card["id"] = next_id + len(out)
        card["name"] = f"{raw['name']} {label}"
        card["text"] = (
            "Calibration: the neutral card with "
            + ", ".join(f"{k} {v} (was {base[k]})" for k, v in new.items())
            + "."
        )
        dev = card_points({**base, **new}, cs.skills, cs.budget) - cs.points(cs.neutral)
        out.append(
            {
                "name": card["name"],
                "changes": dict(changes),
                "stat": next(iter(changes)) if len(changes) == 1 else None,
                "change": label,
                "budget": float(round(dev, 9)),
                "card": card,
            }
        )
    return out


def calibration_set(cs, store_root: Path) -> tuple[Path, list[dict]]:
    """The set with its calibration cards appended (rows after every card of
    the set, so every deck keeps its rows), written once under the store as
    ``trisk/_sets/calibration-<hash>.toml``; returns its path and the cards."""
    import hashlib

    cards = calibration_cards(cs)
    text = cs.path.read_text(encoding="utf-8").rstrip("\n") + "\n"
    text += "\n# ---- calibration cards added by `balance trisk power` (not part of the set) ----\n"
    for c in cards:
        text += "\n[[card]]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in c["card"].items())
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = Path(store_root) / GAME / "_sets" / f"calibration-{digest}.toml"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    return path, cards


def fit_rate(budget: Sequence[float], effect: Sequence[float], alpha: float = 0.05) -> dict:
    """One rate for every stat: least squares through the origin of the
    calibration cards' effects on their budget deviations.

    The unit is the calibration card, not the game: the residual spread
    holds both each effect's sampling error and how far the cards stray from
    one exchange rate (an AP and an HP point are not worth the same), so the
    interval (Student t, m − 1 degrees of freedom) says how well one rate
    describes the budget, not only how precisely it was measured. The page
    shows it as a summary; conversions use the per-stat curves
    (:func:`side_rates`).

    Returns ``rate``, ``se``, ``lo``, ``hi``, ``cards`` (m) and ``resid_sd``
    (score); ``nan`` with fewer than 2 cards.
    """
    from scipy import stats as sps

    x = np.asarray(budget, dtype=float)
    y = np.asarray(effect, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x != 0)
    x, y = x[ok], y[ok]
    m = int(x.size)
    nan = float("nan")
    if m < 2:
        return {"rate": nan, "se": nan, "lo": nan, "hi": nan, "cards": m, "resid_sd": nan}
    sxx = float(x @ x)
    rate = float(x @ y) / sxx
    resid = y - rate * x
    s2 = float(resid @ resid) / (m - 1)
    se = math.sqrt(s2 / sxx)
    t = float(sps.t.ppf(1 - alpha / 2, m - 1))
    return {
        "rate": rate,
        "se": se,
        "lo": rate - t * se,
        "hi": rate + t * se,
        "cards": m,
        "resid_sd": math.sqrt(s2),
    }


@dataclass(frozen=True)
class Est:
    """A linear estimate from per-deal data: its value and its influence per
    deal cluster (``u[i]``: deal ``i`` across every stratum, as
    :func:`pool_strata` clusters). Sums of estimates are estimates, so a rate
    fitted from several calibration cards, a card's mix of rates and their
    covariances with a card's effect all come out of one sandwich."""

    mean: float
    u: np.ndarray

    @property
    def var(self) -> float:
        return cov_est(self, self)

    @property
    def se(self) -> float:
        v = self.var
        return math.sqrt(v) if math.isfinite(v) and v >= 0 else float("nan")


def est_of(diffs: Sequence[np.ndarray]) -> Est:
    """The mean of strata means of ``diffs`` (as :func:`pool_strata`) with its
    per-deal influence."""
    arrs = [np.asarray(d, dtype=float).ravel() for d in diffs]
    arrs = [a for a in arrs if a.size]
    if not arrs:
        return Est(float("nan"), np.zeros(0))
    k = len(arrs)
    g = max(a.size for a in arrs)
    u = np.zeros(g)
    means = [float(a.mean()) for a in arrs]
    for a, m in zip(arrs, means, strict=True):
        u[: a.size] += (a - m) / (k * a.size)
    return Est(float(np.mean(means)), u)


def combine(terms: Iterable[tuple[float, Est]]) -> Est:
    """``Σ w·e`` of estimates on the same deals."""
    terms = [(float(w), e) for w, e in terms if w != 0]
    if not terms:
        return Est(0.0, np.zeros(0))
    g = max(e.u.size for _, e in terms)
    u = np.zeros(g)
    for w, e in terms:
        u[: e.u.size] += w * e.u
    return Est(float(sum(w * e.mean for w, e in terms)), u)


def cov_est(a: Est, b: Est) -> float:
    """Cluster-robust covariance of two estimates (deal ``i`` of one is deal
    ``i`` of the other: same seeds), with :func:`pool_strata`'s ``G/(G−1)``."""
    g = max(a.u.size, b.u.size)
    k = min(a.u.size, b.u.size)
    if g < 2:
        return float("nan")
    return float(g / (g - 1) * float(a.u[:k] @ b.u[:k]))


def fieller(num: float, den: float, v_num: float, v_den: float, cov: float = 0.0, q: float = _Z95):
    """Fieller's confidence set for ``num / den`` (both normal, known
    variances and covariance): every θ with ``|num − θ·den| ≤ q·sd(num − θ·den)``.

    When ``den``'s own interval (``den ± q·sd``) excludes 0 the set is a
    finite interval; when it reaches 0 no finite interval has the coverage,
    and the set is either the whole line or the line less an interval.
    Returns ``value`` (num/den), ``lo``, ``hi`` (``±inf`` when unbounded),
    ``kind`` (``"interval"``, ``"outside"``: θ ≤ ``gap_lo`` or θ ≥
    ``gap_hi``, or ``"all"``), ``bounded``, and for an interval ``falling``
    (``den``'s interval lies below 0: for a rate, more of the stat scored
    less, and the ratio places the card on a falling curve, not a worth).
    """
    nan, inf = float("nan"), math.inf
    vals = (num, den, v_num, v_den, cov)
    if not all(math.isfinite(x) for x in vals):
        return {"value": nan, "lo": nan, "hi": nan, "kind": "none", "bounded": False}
    value = num / den if den != 0 else nan
    a = den * den - q * q * v_den
    b = num * den - q * q * cov
    c = num * num - q * q * v_num
    disc = b * b - a * c
    if a > 0:
        s = math.sqrt(max(disc, 0.0))
        return {
            "value": value,
            "lo": (b - s) / a,
            "hi": (b + s) / a,
            "kind": "interval",
            "bounded": True,
            # the rate's interval lies below 0: more of these stats scored less, so the
            # reading is a place on a falling curve, not a worth
            "falling": den < 0,
        }
    if a < 0 and disc > 0:
        s = math.sqrt(disc)
        g1, g2 = sorted(((b - s) / a, (b + s) / a))
        return {
            "value": value,
            "lo": -inf,
            "hi": inf,
            "kind": "outside",
            "gap_lo": g1,
            "gap_hi": g2,
            "bounded": False,
        }
    return {"value": value, "lo": -inf, "hi": inf, "kind": "all", "bounded": False}


def fmt_budget(f: Mapping, nd: int = 1) -> str:
    """``≈ N [lo, hi]``; an unbounded set says so (never a made-up finite end)."""

    def n(x):
        return f"{x:+.{nd}f}" if math.isfinite(x) else "—"

    v = f.get("value", float("nan"))
    if f.get("kind") == "interval":
        note = " (a falling curve: more of these stats scored less)" if f.get("falling") else ""
        return f"≈ {n(v)} [{n(f['lo'])}, {n(f['hi'])}]{note}"
    if f.get("kind") == "outside":
        return f"≈ {n(v)}, unbounded (≤ {n(f['gap_lo'])} or ≥ {n(f['gap_hi'])}: the rate's interval reaches 0)"
    if f.get("kind") == "all":
        return f"≈ {n(v)}, unbounded (any value: the rate's interval reaches 0)"
    return "—"


def budget_components(card: Mapping, neutral: Mapping, skills, budget) -> dict[str, float]:
    """The budget points by which ``card`` differs from the neutral card, per
    calibrated stat (:data:`CAL_STATS`), the rest (abilities, resistances,
    weaknesses, shades; the X of an ability follows MP) in ``other``. A
    Sorcery has no stats to compare: its whole difference is ``other``.
    Zero components are left out; they sum to the card's points − the
    neutral's."""
    total = round(card_points(card, skills, budget) - card_points(neutral, skills, budget), 9)
    if card["type"] == "Sorcery":
        return {"other": total} if total else {}
    comp: dict[str, float] = {}
    for s in ("hp", "ap", "mp", "armor"):
        comp[s] = budget[s] * (card[s] - neutral[s])
    comp["flying"] = budget["flying"] * (int(bool(card["flying"])) - int(bool(neutral["flying"])))

    def attack(c):
        return (
            0.0
            if c["attack"] is None
            else max(0.0, budget["attack"] - budget["unlock"] * c["attack"])
        )

    comp["attack"] = attack(card) - attack(neutral)
    comp["other"] = total - sum(comp.values())
    return {k: round(v, 9) for k, v in comp.items() if abs(v) > 1e-9}


def _side(stat: str, x: float) -> str:
    return f"{stat}{'+' if x > 0 else '-'}"


def side_rates(points: Sequence[Mapping], ests: Mapping[str, Est]) -> dict[str, dict]:
    """Score per budget point on each side of each stat, and pooled over the
    stats: a calibration curve through the origin that may bend at 0.

    ``points``: the calibration cards (``name``, ``stat``, ``budget``);
    ``ests``: each one's effect (:class:`Est`) by name. On each side (``hp+``,
    ``hp-``, …; ``pooled+`` / ``pooled-`` over every single-stat card of the
    side) the rate is least squares through the origin of the effects on the
    budget deviations, ``Σ x·y / Σ x²``: one card gives its effect / budget.
    Its SE is the deal-cluster sandwich of that sum (the cards share their
    deals and the reference deck's games, so they are not independent), its
    interval normal. Returns per side an :class:`Est` (``est``) with
    ``rate``, ``se``, ``lo``, ``hi``, ``cards`` (names) and ``budget``.
    """
    groups: dict[str, list] = {}
    for p in points:
        x = float(p["budget"])
        if p.get("stat") is None or x == 0 or p["name"] not in ests:
            continue
        groups.setdefault(_side(p["stat"], x), []).append(p)
        groups.setdefault(_side("pooled", x), []).append(p)
    out = {}
    for key in sorted(groups):
        ps = groups[key]
        sxx = sum(float(p["budget"]) ** 2 for p in ps)
        e = combine((float(p["budget"]) / sxx, ests[p["name"]]) for p in ps)
        se = e.se
        out[key] = {
            "est": e,
            "rate": e.mean,
            "se": se,
            "lo": e.mean - _Z95 * se,
            "hi": e.mean + _Z95 * se,
            "cards": [p["name"] for p in ps],
            "budget": [float(p["budget"]) for p in ps],
        }
    return out


def secant(stat: str, x: float, points: Sequence[Mapping], ests: Mapping[str, Est]) -> Est | None:
    """Score per budget point of ``stat`` at a deviation of ``x`` budget
    points: the secant ``g(x)/x`` of the stat's calibration curve ``g``.

    ``g`` runs through the origin and the calibration cards of the stat on
    ``x``'s side (their effects, averaged where two share a deviation),
    straight between them: up to the nearest card it is that card's line
    through the origin, beyond the farthest that card's line through the
    origin. So the curve may bend at 0 and at each calibration card (AP is
    convex: +1 AP is worth far less per point than +2 AP), a card exactly at
    a calibration card's deviation gets that card's rate, and the secant is
    a fixed linear combination of the cards' effects (an :class:`Est`).
    ``None`` when the stat has no calibration card on that side.
    """
    if x == 0:
        return None
    side = [
        p
        for p in points
        if p.get("stat") == stat and p["name"] in ests and float(p["budget"]) * x > 0
    ]
    if not side:
        return None
    by_x: dict[float, list] = {}
    for p in side:
        by_x.setdefault(abs(float(p["budget"])), []).append(ests[p["name"]])
    xs = sorted(by_x)
    ys = [combine((1 / len(v), e) for e in v) for v in (by_x[k] for k in xs)]
    ax = abs(x)
    sign = 1.0 if x > 0 else -1.0
    if ax <= xs[0]:
        return combine([(1 / (sign * xs[0]), ys[0])])
    if ax >= xs[-1]:
        return combine([(1 / (sign * xs[-1]), ys[-1])])
    k = next(i for i in range(len(xs) - 1) if xs[i] <= ax <= xs[i + 1])
    t = (ax - xs[k]) / (xs[k + 1] - xs[k])
    # g(x) = (1 − t)·y_k + t·y_{k+1} between the two cards around |x|; the rate is g(x)/x
    return combine([((1 - t) / x, ys[k]), (t / x, ys[k + 1])])


def card_rate(
    components: Mapping[str, float],
    rates: Mapping[str, dict],
    points: Sequence[Mapping] = (),
    ests: Mapping[str, Est] | None = None,
) -> tuple[Est | None, dict]:
    """The rate a card's effect is divided by: its budget deviation spread
    over the stats it differs from the neutral by.

    Each component (a stat's budget points, :func:`budget_components`) takes
    its stat's calibration curve at that deviation (:func:`secant`: −8 HP
    reads the HP curve at −8); a component without a curve there (abilities
    and the rest, or a side the neutral cannot move to) takes the pooled
    rate of its side (``pooled+`` / ``pooled-`` of :func:`side_rates`). The
    card's rate is the mean of those rates weighted by ``|component|`` (a
    Bear, −8 HP and +2 AP among others, is mostly an HP-down card), so a card
    that differs from the neutral in one stat gets exactly that stat's curve.
    Returns the rate as an :class:`Est` (``None`` when the card's price does
    not differ from the neutral's in any component or a needed curve is
    missing) and the weight of each curve used (``hp@-8``, ``pooled+``, …).
    """
    total = sum(abs(v) for v in components.values())
    if total == 0:
        return None, {}
    weights: dict[str, float] = {}
    terms: list[tuple[float, Est]] = []
    for stat, x in components.items():
        w = abs(x) / total
        e = secant(stat, x, points, ests or {}) if stat != "other" else None
        if e is not None:
            key = f"{stat}@{x:+g}"
        else:
            key = _side("pooled", x)
            if key not in rates:
                return None, {}
            e = rates[key]["est"]
        weights[key] = weights.get(key, 0.0) + w
        terms.append((w, e))
    return combine(terms), weights


def to_budget(effect: Est, rate: Est, cov: float | None = None) -> dict:
    """A card's effect in budget points, ``effect / rate``, with Fieller's 95%
    set: it carries both the effect's and the rate's uncertainty and their
    covariance (they share deals; ``cov`` overrides it), and is unbounded
    (and says so) when the rate's interval reaches 0."""
    c = cov_est(effect, rate) if cov is None else cov
    return fieller(effect.mean, rate.mean, effect.var, rate.var, c if math.isfinite(c) else 0.0)


def _rate_text(r: Mapping) -> str:
    return f"{r['rate'] * 100:.2f} [{r['lo'] * 100:.2f}, {r['hi'] * 100:.2f}]"


def calibration_lines(cal: Mapping, plan: PowerPlan) -> list[str]:
    """The calibration in a few lines of text (the CLI's log and summary)."""
    rates = cal["rates"]
    per = "; ".join(
        f"{_STAT_LABEL.get(k[:-1], k[:-1])} {'up' if k[-1] == '+' else 'down'} {_rate_text(v)}"
        for k, v in rates.items()
        if not k.startswith("pooled")
    )
    out = [f"budget points: points of score per budget point, 95% CI: {per}"]
    pooled = [
        f"{'above' if k == 'pooled+' else 'below'} budget {_rate_text(rates[k])}"
        for k in ("pooled+", "pooled-")
        if k in rates
    ]
    if pooled:
        out.append("  pooled over the stats: " + "; ".join(pooled))
    db, mf, ml = cal["delta_budget"], cal["mde"]["first"], cal["mde"]["last"]
    out.append(
        f"  δ = ±{plan.delta * 100:g} points ≈ {fmt_budget(db['up'])} budget points above, "
        f"{fmt_budget(db['down'])} below"
    )
    out.append(
        f"  detected with {plan.power:.0%} power at {mf['games']:,} games a run: "
        f"{fmt_budget(mf['up'])} above, {fmt_budget(mf['down'])} below; at {ml['games']:,}: "
        f"{fmt_budget(ml['up'])} above, {fmt_budget(ml['down'])} below"
    )
    return out


def _budget_columns(cal: Mapping) -> pd.DataFrame:
    """Each card's effect in budget points as columns of the cards table:
    ``budget_points``, ``budget_lo``, ``budget_hi`` (``±inf`` when unbounded),
    ``budget_interval`` (:func:`fieller`'s kind), ``budget_text``,
    ``budget_rate`` (score per budget point used)."""
    rows = [
        {
            "row": c["row"],
            "budget_points": c["budget"]["value"],
            "budget_lo": c["budget"]["lo"],
            "budget_hi": c["budget"]["hi"],
            "budget_interval": c["budget"]["kind"],
            "budget_text": fmt_budget(c["budget"]),
            "budget_rate": c["rate"],
        }
        for c in cal.get("cards", [])
    ]
    cols = [
        "row",
        "budget_points",
        "budget_lo",
        "budget_hi",
        "budget_interval",
        "budget_text",
        "budget_rate",
    ]
    return pd.DataFrame(rows, columns=cols)


def _finite(x):
    """JSON-safe: non-finite floats become None (an unbounded end is told by
    the interval's ``kind``), numpy scalars Python ones, recursively."""
    if isinstance(x, Mapping):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _cal_strata(cctx: Context, runs: _Runs, c: int, n: int) -> list[np.ndarray]:
    out = []
    for cc, p in cctx.cells:
        if cc == c:
            out += _cell_strata(cctx, runs, c, p, n)[0]
    return out


def cards_in_budget(
    ctx: Context,
    runs: _Runs,
    cards: pd.DataFrame,
    rates: Mapping[str, dict],
    points: Sequence[Mapping],
    ests: Mapping[str, Est],
) -> list[dict]:
    """Every tested card's effect in budget points (:func:`card_rate`,
    :func:`to_budget`): one dict per card with ``card``, ``row``,
    ``components``, ``weights``, ``rate`` (lo, hi) and ``budget``
    (:func:`fieller`'s dict)."""
    cs = ctx.cardset
    neutral = cs.cards[cs.neutral]
    out = []
    for r in cards.itertuples():
        row = int(r.row)
        comp = budget_components(cs.cards[row], neutral, cs.skills, cs.budget)
        rate, weights = card_rate(comp, rates, points, ests)
        n = int(getattr(r, "games_per_run", 0) or 0)
        eff = est_of(
            [d for cc, p in ctx.cells if cc == row for d in _cell_strata(ctx, runs, row, p, n)[0]]
        )
        if rate is None or not math.isfinite(eff.mean):
            conv = fieller(float("nan"), float("nan"), 0.0, 0.0)
        else:
            conv = to_budget(eff, rate)
        rse = rate.se if rate is not None else float("nan")
        out.append(
            {
                "card": str(r.card),
                "row": row,
                "components": comp,
                "weights": weights,
                "rate": rate.mean if rate is not None else float("nan"),
                "rate_lo": rate.mean - _Z95 * rse if rate is not None else float("nan"),
                "rate_hi": rate.mean + _Z95 * rse if rate is not None else float("nan"),
                "budget": conv,
            }
        )
    return out


def calibration_context(ctx: Context, store_root: Path) -> tuple[Context, list[dict]]:
    """The calibration's context (the set with its calibration cards, written
    under the store by :func:`calibration_set`, and only those cards to test)
    and the calibration cards."""
    path, cal = calibration_set(ctx.cardset, store_root)
    cplan = replace(ctx.plan, card_set=str(path), cards=tuple(c["name"] for c in cal), vs_card=None)
    return build_context(cplan), cal


def calibration_specs(cctx: Context, n: int) -> tuple[list[RunSpec], list[RunSpec]]:
    """The calibration's runs of ``n`` games: the reference decks, then the
    calibration cards swapped in. Their keys name the calibration set by its
    content (``runner.key_rules``), not by where the store lies."""
    ref = [
        _ref_spec(cctx, s, p, o, n)
        for p in sorted(cctx.decks)
        for s in cctx.ours
        for o in cctx.field
    ]
    swap = [
        _swap_spec(cctx, s, c, p, o, n)
        for (c, p) in cctx.cells
        for s in cctx.ours
        for o in cctx.field
    ]
    return ref, swap


def run_calibration(ctx: Context, runs: _Runs, store_root: Path, cards: pd.DataFrame) -> dict:
    """Play the off-budget copies of the neutral card (:data:`CALIBRATION`) the
    way the cards were played (same copies, decks, strategies, field, seeds)
    and convert the test's terms into budget points.

    Returns a dict: ``points`` (one row per calibration card: name, stat,
    budget, effect, lo, hi, games, verdict), ``rates`` (:func:`side_rates`:
    score per budget point on each side of each stat and pooled), ``rate``
    (:func:`fit_rate`, one rate for every stat, the cards as units: a
    summary), ``cards`` (:func:`cards_in_budget`: each tested card's effect
    in budget points), ``delta_budget`` (δ in budget points above and below
    the budget, pooled curves, with intervals), ``mde`` (the smallest budget
    deviation the plan detects with ``plan.power`` at the strictest Holm step
    of a look, at the first and the last games a run:
    ``(z_{1-α_look/(2m)} + z_power)·sd / sqrt(deals)`` with the median
    card's per-deal SD, divided by each pooled rate, with intervals) and
    ``games``.
    """
    plan = ctx.plan
    cctx, cal = calibration_context(ctx, store_root)
    path = cctx.cardset.path
    n = plan.calibration_games
    ref_specs, card_specs = calibration_specs(cctx, n)
    runs.run(ref_specs, "trisk power: calibration, reference decks")
    runs.run(card_specs, "trisk power: calibration cards")
    _, table, _ = _card_tables(cctx, runs, {c: n for c in cctx.cards})
    # each calibration card through the test's own decision, as if it were a
    # card of the set: is a card this far off the budget flagged?
    table = decide(table, plan.delta, plan.alpha, plan.power, n_looks=looks(plan)).set_index("card")
    ests = {}
    pts = []
    for c in cal:
        r = table.loc[c["name"]]
        ests[c["name"]] = est_of(_cal_strata(cctx, runs, cctx.cardset.row(c["name"]), n))
        pts.append(
            {
                "name": c["name"],
                "changes": c["changes"],
                "stat": c["stat"],
                "change": c["change"],
                "budget": c["budget"],
                "effect": float(r["effect"]),
                "lo": float(r["effect"] - _Z95 * r["se"]),
                "hi": float(r["effect"] + _Z95 * r["se"]),
                "games": int(r["games"]),
                "verdict": str(r["verdict"]),
                "label": str(r["label"]),
            }
        )
    rates = side_rates(pts, ests)
    rate = fit_rate([p["budget"] for p in pts], [p["effect"] for p in pts], plan.alpha)
    converted = cards_in_budget(ctx, runs, cards, rates, pts, ests) if len(cards) else []

    def over(score: float, key: str) -> dict:
        if key not in rates:
            return fieller(float("nan"), float("nan"), 0.0, 0.0)
        e = rates[key]["est"]
        return fieller(score, e.mean, 0.0, e.var)

    d = plan.delta
    delta_budget = {"up": over(d, "pooled+"), "down": over(-d, "pooled-")}
    norm = _norm()
    m = max(len(cards), 1)
    z = float(norm.ppf(1 - plan.alpha / looks(plan) / (2 * m)) + norm.ppf(plan.power))
    nan = float("nan")
    sd = float(np.nanmedian(cards["sd"].to_numpy(float))) if len(cards) else nan
    strata = float(np.nanmedian(cards["strata"].to_numpy(float))) if len(cards) else nan
    mde = {}
    for key, g in (("first", plan.games), ("last", plan.max_games)):
        # sd is the SD of a deal's average over the strata: SE = sd / sqrt(deals a stratum)
        score = z * sd / math.sqrt(g / 2)
        mde[key] = {
            "games": g,
            "score": score,
            "up": over(score, "pooled+"),
            "down": over(-score, "pooled-"),
            "games_total": g * strata,
        }
    return {
        "points": pts,
        "rates": {k: {kk: vv for kk, vv in v.items() if kk != "est"} for k, v in rates.items()},
        "rate": rate,
        "cards": converted,
        "delta_budget": delta_budget,
        "mde": mde,
        "games": n,
        "card_set": str(path),
    }


def strategy_check(ctx: Context, runs: _Runs, cards: pd.DataFrame) -> pd.DataFrame:
    """Each card's effect again under ``plan.check_strategy`` (our side; same
    field, decks, copies and deals), at ``plan.games`` a run.

    Adds the columns of :func:`strategy_depends`: the second strategy's
    effect and verdict (the same tests, one look), the difference between the
    strategies' effects on the same deals, and ``depends_on_strategy`` where
    that dependence is shown.
    """

    plan = ctx.plan
    s2 = [load_strategy(GAME, plan.check_strategy)]
    n = plan.games
    runs.run(
        [
            _ref_spec(ctx, s, p, o, n)
            for p in sorted({p for _, p in ctx.cells})
            for s in s2
            for o in ctx.field
        ],
        "trisk power: second strategy, reference decks",
    )
    for c in ctx.cards:
        runs.run(
            [
                _swap_spec(ctx, s, c, p, o, n)
                for (cc, p) in ctx.cells
                if cc == c
                for s in s2
                for o in ctx.field
            ],
            f"trisk power: second strategy, {ctx.name(c)}",
        )
    rows = []
    for c in ctx.cards:
        d1, d2 = [], []
        for cc, p in ctx.cells:
            if cc != c:
                continue
            d2 += _cell_strata(ctx, runs, c, p, n, ours=s2)[0]
            d1 += _cell_strata(ctx, runs, c, p, n)[0][: len(ctx.field)]
        a = pool_strata(d2)
        diff = pool_strata(
            [
                x[: min(len(x), len(y))] - y[: min(len(x), len(y))]
                for x, y in zip(d1, d2, strict=False)
            ]
        )
        rows.append(
            {
                "row": c,
                "effect": a["mean"],
                "se": a["se"],
                "sd": a["sd"],
                "games": a["n_games"],
                "strata": a["strata"],
                "diff": diff["mean"],
                "diff_se": diff["se"],
            }
        )
    t = decide(pd.DataFrame(rows), plan.delta, plan.alpha, plan.power)
    return cards.merge(strategy_depends(cards, t, plan.delta, plan.alpha), on="row", how="left")


def strategy_depends(
    cards: pd.DataFrame, second: pd.DataFrame, delta: float, alpha: float = 0.05
) -> pd.DataFrame:
    """Does a card's verdict depend on the strategy that plays it? Only where
    that is shown (METHODS: a label says only what its interval shows).

    Parameters
    ----------
    cards : DataFrame
        The cards under the plan's strategy, decided (:func:`decide`):
        ``row``, ``verdict``, ``effect``.
    second : DataFrame
        The same cards under the check strategy, decided (``row``,
        ``effect``, ``lo``, ``hi``, ``verdict``, ``label``, ``direction``,
        ``games``), with ``diff`` and ``diff_se``: the difference between the
        two strategies' effects on the same deals (first − second) and its SE.
    delta, alpha : float
        The margin and the familywise level of the difference test.

    Returns
    -------
    DataFrame
        One row per card of ``second``: ``effect2``, ``lo2``, ``hi2``,
        ``verdict2``, ``label2``, ``direction2``, ``games2``;
        ``strategy_diff`` with its 95% CI, Holm-adjusted p over the cards
        (``strategy_p_holm``) and ``strategy_diff_significant``;
        ``depends_on_strategy``, True where it is shown: the difference
        between the strategies is significant (two-sided normal test, Holm
        over the cards at ``alpha``), or the two verdicts lie wholly on
        opposite sides of a margin (shown inside ±δ under one strategy and
        shown outside under the other, or shown outside on opposite sides);
        ``verdict_depends``, the part of it where the verdict itself changes
        (the two verdicts on opposite sides of a margin), and
        ``strategy_why``, the reason in words ("" where not shown). A
        card "not shown equal" or "inconclusive" under either strategy, with
        no significant difference, is never flagged: a card at the margin
        measured +0.67 under one strategy and +0.82 under the other
        (difference −0.15 [−0.51, +0.21]) shows no dependence.
    """
    norm = _norm()
    diff = second["diff"].to_numpy(float)
    diff_se = second["diff_se"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(diff) / diff_se
    p = np.where(np.isfinite(z), 2 * norm.sf(z), np.nan)
    reject, p_adj = holm(p, alpha)
    reject = np.asarray(reject, bool)
    first = cards.set_index("row").loc[second["row"]]
    v1 = first["verdict"].to_numpy(str)
    v2 = second["verdict"].to_numpy(str)
    e1 = first["effect"].to_numpy(float)
    e2 = second["effect"].to_numpy(float)
    shown = ("equal", "equal within margin")
    in1, in2 = np.isin(v1, shown), np.isin(v2, shown)
    out1, out2 = v1 == "not equal", v2 == "not equal"
    # wholly on opposite sides of a margin: inside under one and outside under
    # the other, or outside on opposite sides; a side not shown says nothing
    across = (in1 & out2) | (out1 & in2)
    opposite = out1 & out2 & (np.sign(e1) != np.sign(e2))
    why = []
    m = f"±{delta * 100:g} pt"
    for r, a, o in zip(reject, across, opposite, strict=True):
        parts = []
        if a:
            parts.append(f"shown inside {m} under one strategy and outside under the other")
        if o:
            parts.append(f"shown outside {m} on opposite sides")
        if r:
            parts.append("the effects differ (Holm)")
        why.append("; ".join(parts))
    return pd.DataFrame(
        {
            "row": second["row"].to_numpy(),
            "effect2": e2,
            "lo2": second["lo"].to_numpy(float),
            "hi2": second["hi"].to_numpy(float),
            "verdict2": v2,
            "label2": second["label"].to_numpy(str),
            "direction2": second["direction"].to_numpy(str),
            "games2": second["games"].to_numpy(),
            "strategy_diff": diff,
            "strategy_diff_lo": diff - _Z95 * diff_se,
            "strategy_diff_hi": diff + _Z95 * diff_se,
            "strategy_p_holm": p_adj,
            "strategy_diff_significant": reject,
            "depends_on_strategy": reject | across | opposite,
            "verdict_depends": across | opposite,
            "strategy_why": why,
        }
    )


def _add_restricted(ctx: Context, runs: _Runs, cards: pd.DataFrame, nr: int) -> pd.DataFrame:
    """Restricted play forbids the card's row, so every copy in the swapped deck
    (the one swapped in and any the reference deck already holds) is dead:
    ``restricted`` is all of them dead against the reference deck, and
    ``play_value`` (swapped − restricted) is what playing the card is worth
    per copy in the deck (each cell's difference divided by its copies)."""
    rows = []
    for c in ctx.cards:
        dead, play, copies = [], [], []
        for cc, p in ctx.cells:
            if cc != c:
                continue
            d, _ = _cell_strata(ctx, runs, c, p, nr, "restricted")
            dead += d
            k_copies = ctx.decks[p].swap_in(c, ctx.plan.copies).cards.count(c)
            copies.append(k_copies)
            for s in ctx.ours:
                for o in ctx.field:
                    x = runs.get(_swap_spec(ctx, s, c, p, o, 2)).pair_points.astype(float)
                    y = runs.get(_restricted_spec(ctx, s, c, p, o, 2)).pair_points.astype(float)
                    k = min(len(x), len(y), nr // 2)
                    play.append((x[:k] - y[:k]) / 4 / k_copies)
        a, b = pool_strata(dead), pool_strata(play)
        rows.append(
            {
                "row": c,
                "copies": float(np.mean(copies)),
                "restricted": a["mean"],
                "restricted_lo": a["mean"] - _Z95 * a["se"],
                "restricted_hi": a["mean"] + _Z95 * a["se"],
                "restricted_games": a["n_games"],
                "play_value": b["mean"],
                "play_lo": b["mean"] - _Z95 * b["se"],
                "play_hi": b["mean"] + _Z95 * b["se"],
            }
        )
    return cards.merge(pd.DataFrame(rows), on="row", how="left")


def _deck_rows(ctx: Context) -> list[dict]:
    out = []
    cs = ctx.cardset
    for p in sorted(ctx.decks):
        d = ctx.decks[p]
        counts: dict[str, int] = {}
        for r in d.cards:
            counts[cs.names[int(r)]] = counts.get(cs.names[int(r)], 0) + 1
        out.append(
            {
                "primal": cs.names[p],
                "name": d.name,
                "size": len(d.cards),
                "cards": ", ".join(f"{k} ×{v}" for k, v in counts.items()),
            }
        )
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


def _power_manifest(ctx: Context, elapsed: float, runs: _Runs, threads) -> dict:

    return {
        **provenance(GAME),
        "seed": ctx.plan.seed,
        "card_set": ctx.ruleset.rules.get("card_set"),
        "card_set_digest": ctx.cardset.digest,
        "variant": ctx.ruleset.name,
        "plan": ctx.plan.as_dict(),
        "timings": {
            "total_s": round(elapsed, 2),
            "threads": threads,
            "runs_simulated": runs.simulated,
            "runs_read": runs.read,
        },
    }


# =========================================================================== regression
REG_CHUNK = 200  # deck pairs per stored table: an interrupted regression loses at most one


def _pair_seed(seed: int, k: int) -> int:
    return (seed * 0x9E3779B97F4A7C15 + 0xBF58476D1CE4E5B9 * (k + 1)) % 2**64


def regression_decks(ctx: Context, k: int) -> tuple[Any, Any]:
    """Deck pair ``k`` of the regression: a random Primal each side, a random
    legal deck of its reference deck's size (the same for any chunking)."""

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

    from balance import executor

    rules = ctx.ruleset.vector()
    m = ctx.plan.regression_games
    decks = {k: regression_decks(ctx, k) for k in range(first, first + count)}
    jobs = [
        runner.Job(
            GAME,
            rules,
            ctx.side(strat, da).vector(),
            ctx.side(strat, db).vector(),
            _pair_seed(ctx.plan.seed, k),
            0,
            m,
            tag=k,
        )
        for k, (da, db) in decks.items()
    ]
    rows = {}
    for job, b in executor.current().play(
        jobs, runner.play_batch
    ):  # each pair is its own seed's games 0..m-1
        da, db = decks[job.tag]
        rows[job.tag] = {
            "pair": job.tag,
            "primal_a": da.primal,
            "primal_b": db.primal,
            "deck_a": list(da.cards),
            "deck_b": list(db.cards),
            "a_wins": int(b.wins[0]),
            "b_wins": int(b.wins[1]),
            "draws": int(b.wins[2]),
            "games": int(b.wins.sum()),
        }
    return pd.DataFrame([rows[k] for k in sorted(rows)])


def run_regression(
    ctx: Context,
    *,
    results=None,
    threads=None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    store_only: bool = False,
) -> tuple[pd.DataFrame, dict]:
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

    plan = ctx.plan
    strat = load_strategy(GAME, plan.regression_strategy)
    store = Store(results)
    runner.set_threads(threads)
    eng = get_game(GAME).engine_module()
    frames = []
    n_chunks = math.ceil(plan.regression_pairs / REG_CHUNK)
    bar = runner._Progress(
        plan.regression_pairs * plan.regression_games,
        "trisk power: regression decks",
        progress,
    )
    try:
        for i in range(n_chunks):
            first = i * REG_CHUNK
            count = min(REG_CHUNK, plan.regression_pairs - first)
            key_config = {
                "kind": "trisk-power-regression",
                "engine_version": eng.VERSION,
                "rules": runner.key_rules(ctx.ruleset),
                "card_set_digest": ctx.cardset.digest,
                "strategy": strat.spec,
                "seed": plan.seed,
                "first": first,
                "count": count,
                "games": plan.regression_games,
                "format": 1,
            }
            key = config_hash(key_config)
            loaded = store.load(
                GAME, key, parse=_needs_table("regression"), recompute=not store_only
            )
            if loaded is not None:
                frames.append(loaded[1]["regression"].to_pandas())
            elif store_only:
                raise UserError(
                    f"the regression decks {first}..{first + count - 1} of the power "
                    f"test are not in the store {store.root}; run `balance study` "
                    "(or `balance trisk power`) first"
                )
            else:
                t1 = time.perf_counter()
                df = _regression_chunk(ctx, strat, first, count)
                store.save(
                    GAME,
                    key,
                    {
                        "kind": "trisk-power-regression",
                        "first": first,
                        "count": count,
                        "seed": plan.seed,
                        "card_set_digest": ctx.cardset.digest,
                        "engine_version": eng.VERSION,
                        "timings": {"simulate_s": round(time.perf_counter() - t1, 3)},
                        "key_config": key_config,  # what the key hashes, checked on read
                    },
                    {"regression": pl.from_pandas(df)},
                )
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
    for i, (a, b) in enumerate(zip(data["deck_a"], data["deck_b"], strict=False)):
        np.add.at(ca[i], np.asarray(a, int), 1)
        np.add.at(cb[i], np.asarray(b, int), 1)
    diff = ca - cb
    dealt = ca.sum(0) + cb.sum(0)
    cols = [
        c
        for c in range(nc)
        if c != cs.neutral and c not in ctx.decks and dealt[c] > 0 and np.any(diff[:, c] != 0)
    ]
    prim = sorted(ctx.decks)
    pa = np.array([[1.0 if x == p else 0.0 for p in prim[1:]] for x in data["primal_a"]])
    pb = np.array([[1.0 if x == p else 0.0 for p in prim[1:]] for x in data["primal_b"]])
    X = np.hstack([diff[:, cols], (pa - pb).reshape(len(data), -1)])
    succ = data["a_wins"].to_numpy(float) + data["draws"].to_numpy(float) / 2
    fail = data["games"].to_numpy(float) - succ
    info = {
        "pairs": int(len(data)),
        "games": int(data["games"].sum()),
        "reference": cs.names[cs.neutral],
        "primal_reference": cs.names[prim[0]],
        "note": "",
        "dispersion": float("nan"),
    }
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
        names = sorted(
            {
                type(w.message).__name__ if not isinstance(w.message, str) else "warning"
                for w in caught
            }
        )
        if names:
            info["note"] = (
                "statsmodels warned: "
                + ", ".join(names)
                + "; coefficients of rarely dealt cards are unreliable"
            )
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
        rows.append(
            {
                "card": cs.names[c],
                "row": c,
                "coef": b,
                "coef_lo": lo,
                "coef_hi": hi,
                "reg_points": b / 4,
                "reg_lo": lo / 4,
                "reg_hi": hi / 4,
                "reg_p": p,
                "copies": int(dealt[c]),
            }
        )
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
    return {
        "cards": changed,
        "table_equal": table_equal,
        "digest_equal": digest_equal,
        "games": n,
        "differ": differ,
        "ok": ok,
        "text": (
            f"{changed} cards' finishes permuted: encoded table "
            f"{'identical' if table_equal else 'DIFFERENT'}, digest "
            f"{'identical' if digest_equal else 'DIFFERENT'}; {n:,} games, {differ} differ."
        ),
    }


def _needs_table(name: str):
    """A store check: the entry holds table ``name`` (else it is damaged)."""

    def parse(manifest: dict, tables: dict):

        if name not in tables:
            raise Damaged(f"{name}.parquet is missing")
        return manifest, tables

    return parse


def _needs_finishes(manifest: dict, tables: dict):
    """A store check: the entry's manifest holds the finishes check."""

    if not isinstance(manifest.get("finishes"), dict):
        raise Damaged("manifest.json lacks the finishes check")
    return manifest, tables


def _stored_finishes(ctx: Context, results, threads, store_only: bool) -> dict:
    """The finishes check, kept in the store like the runs (a report rebuilt
    from the store shows the same check without replaying its games)."""

    store = Store(results)
    key_config = {
        "kind": "trisk-power-finishes",
        "engine_version": get_game(GAME).engine_module().VERSION,
        "rules": runner.key_rules(ctx.ruleset),
        "card_set_digest": ctx.cardset.digest,
        "seed": ctx.plan.seed,
        "games": ctx.plan.finishes_games,
        "ours": ctx.ours[0].name,
        "field": ctx.field[-1].name,
        "format": 1,
    }
    key = config_hash(key_config)
    loaded = store.load(GAME, key, parse=_needs_finishes, recompute=not store_only)
    if loaded is not None:
        return loaded[0]["finishes"]
    if store_only:
        raise UserError(
            f"the finishes check of the power test is not in the store {store.root}; "
            "run `balance study` (or `balance trisk power`) first"
        )
    fin = finishes_check(ctx, ctx.plan.finishes_games, threads=threads)
    store.save(
        GAME, key, {"kind": "trisk-power-finishes", "finishes": fin, "key_config": key_config}, {}
    )
    return fin


# =========================================================================== page
def power_section(res: PowerResult, charts: bool = True) -> dict:
    """The page model of a power test (what ``trisk_power.html.j2`` renders);
    the study can embed it."""
    from markupsafe import Markup

    d = res.plan.delta

    def pp_ci(v, lo, hi):
        return fmt.fmt_pp_ci(v, lo, hi)

    def cls(v):
        return {
            "equal": "pos",
            "equal within margin": "pos",
            "not equal": "neg",
            "not shown equal": "",
        }.get(v, "muted")

    check = res.plan.check_strategy is not None and "effect2" in res.cards.columns
    card_rows = []
    for r in res.cards.itertuples():
        cells = [
            table_cell(str(r.n_primals), r.n_primals, title=r.primals),
            table_cell(
                pp_ci(r.effect, r.lo, r.hi), r.effect, "neg" if r.verdict == "not equal" else ""
            ),
            table_cell(fmt.fmt_int(r.games), r.games),
            table_cell(fmt.fmt_p(r.p_holm), r.p_holm),
            table_cell(fmt.fmt_p(r.tost_p), r.tost_p),
            table_cell(r.label, r.verdict, cls(r.verdict)),
        ]
        if check:
            cells += [
                table_cell(pp_ci(r.effect2, r.lo2, r.hi2), r.effect2),
                table_cell(r.label2, r.verdict2, cls(r.verdict2)),
                table_cell(
                    "yes" if r.depends_on_strategy else "no",
                    int(r.depends_on_strategy),
                    "neg" if r.depends_on_strategy else "",
                    title=(f"{r.strategy_why}: " if r.depends_on_strategy else "")
                    + "difference between the strategies' effects "
                    f"{pp_ci(r.strategy_diff, r.strategy_diff_lo, r.strategy_diff_hi)}, "
                    f"Holm p {fmt.fmt_p(r.strategy_p_holm)}",
                ),
            ]
        cells += [
            table_cell(f"{r.copies:.3g}", r.copies),
            table_cell(pp_ci(r.restricted, r.restricted_lo, r.restricted_hi), r.restricted),
            table_cell(pp_ci(r.play_value, r.play_lo, r.play_hi), r.play_value),
        ]
        if res.regression is not None:
            cells.append(
                table_cell(
                    pp_ci(
                        getattr(r, "reg_points", math.nan),
                        getattr(r, "reg_lo", math.nan),
                        getattr(r, "reg_hi", math.nan),
                    ),
                    getattr(r, "reg_points", math.nan),
                )
            )
        if res.calibration:
            cells.append(_budget_cell(r))
        card_rows.append({"name": r.card, "cells": cells})
    primal_rows = []
    for r in res.primals.itertuples():
        primal_rows.append(
            {
                "name": r.primal,
                "cells": [
                    table_cell(fmt.fmt_pct_ci(0.5 + r.effect, 0.5 + r.lo, 0.5 + r.hi), r.effect),
                    table_cell(fmt.fmt_int(r.games), r.games),
                    table_cell(fmt.fmt_p(r.p_holm), r.p_holm),
                    table_cell(fmt.fmt_p(r.tost_p), r.tost_p),
                    table_cell(r.label, r.verdict, cls(r.verdict)),
                ],
            }
        )
    cell_rows = [
        {
            "name": r.card,
            "cells": [
                table_cell(r.primal),
                table_cell(pp_ci(r.effect, r.lo, r.hi), r.effect),
                table_cell(fmt.fmt_int(r.games), r.games),
            ],
        }
        for r in res.cells.itertuples()
    ]
    cal = calibration_page(res.calibration, pp_ci, cls) if res.calibration else None
    depends, size_only, size_depends = [], [], 0
    if check:
        size_depends = int(res.cards["strategy_diff_significant"].fillna(False).astype(bool).sum())
        flagged = res.cards["depends_on_strategy"].fillna(False).astype(bool)
        verdict = (
            res.cards["verdict_depends"].fillna(False).astype(bool)
            if "verdict_depends" in res.cards
            else flagged
        )
        # the verdict itself changes: each with both effects; the effect's
        # size only: the names, so the answer stays short
        depends = [
            f"{r.card} ({pp_ci(r.effect, r.lo, r.hi)} vs {pp_ci(r.effect2, r.lo2, r.hi2)}: "
            f"{r.strategy_why})"
            for r in res.cards[verdict].itertuples()
        ]
        size_only = [str(r.card) for r in res.cards[flagged & ~verdict].itertuples()]
    out: dict[str, Any] = {
        "claim": res.claim,
        "primal_claim": res.primal_claim,
        "delta_points": f"{d * 100:g}",
        "alpha": f"{res.plan.alpha:g}",
        "power": f"{res.plan.power:.0%}",
        "alpha_look": f"{res.plan.alpha / max(res.looks, 1):.3g}",
        "looks": res.looks,
        "header": res.header,
        "vs_card": res.vs_card,
        "calibration": cal,
        "delta_budget": cal["delta_short"] if cal else None,
        "depends": depends,
        "size_only": size_only,
        "size_depends": size_depends,
        "cards": card_rows,
        "primals": primal_rows,
        "cells": cell_rows,
        "has_regression": res.regression is not None,
        "regression_info": res.regression_info,
        "decks": res.decks,
        "finishes": res.finishes,
        "stages": res.stages,
        "pairing": (
            {
                "median": f"{res.pairing['median']:.2f}",
                "lo": f"{res.pairing['lo']:.2f}",
                "hi": f"{res.pairing['hi']:.2f}",
                "strata": res.pairing["strata"],
                "saving": f"{res.pairing['saving'] * 100:.0f}",
            }
            if res.pairing
            else None
        ),
        "budget_html": Markup(_markdown(res.budget.get("markdown", ""))),
        "budget_points": res.budget.get("points", []),
        "rulings": res.manifest.get("rulings", []),
        "manifest": _manifest_items(res),
        "plan": res.plan,
        "outliers": _outliers(res.cards, d),
        "chart_cards": None,
        "chart_primals": None,
        "chart_calibration": None,
    }
    if charts:
        out["chart_cards"] = trusted_svg(
            "trisk-power-cards",
            ch.save(
                game_charts.trisk_power_chart(
                    res.cards.rename(columns={"card": "name"}),
                    d,
                    "Each card's effect on the score of its deck",
                    f"swap-in ({res.plan.copies} copies) − "
                    f"{'deck with ' + res.vs_card if res.vs_card else 'reference deck'}"
                    " (points per game)",
                ),
                Path("trisk-power-cards"),
                write=False,
            ),
        )
        out["chart_primals"] = trusted_svg(
            "trisk-power-primals",
            ch.save(
                game_charts.trisk_power_chart(
                    res.primals.rename(columns={"primal": "name"}),
                    d,
                    "Each Primal's reference deck against the field",
                    "score − 50% (points per game)",
                ),
                Path("trisk-power-primals"),
                write=False,
            ),
        )
        if res.calibration:
            out["chart_calibration"] = trusted_svg(
                "trisk-power-calibration",
                ch.save(
                    game_charts.trisk_calibration_chart(
                        pd.DataFrame(res.calibration["points"]),
                        res.calibration["rate"],
                        d,
                        res.calibration.get("rates"),
                    ),
                    Path("trisk-power-calibration"),
                    write=False,
                ),
            )
    return out


def _budget_cell(r) -> str:
    """A card's effect in budget points, for the cards table."""
    v = getattr(r, "budget_points", math.nan)
    text = getattr(r, "budget_text", None)
    return table_cell(text if isinstance(text, str) else "—", v if v == v else math.nan)


def _curve_name(key: str) -> str:
    """``hp@-8`` → "HP curve at -8", ``pooled+`` → "pooled, above"."""
    if key.startswith("pooled"):
        return f"pooled, {'above' if key.endswith('+') else 'below'}"
    stat, _, at = key.partition("@")
    return f"{_STAT_LABEL.get(stat, stat)} curve at {at}"


def calibration_page(c: Mapping, pp_ci, cls) -> dict:
    """The page model of the calibration (budget points ↔ score)."""

    def num(x, nd=2):
        return f"{x:.{nd}f}" if math.isfinite(x) else "—"

    def rate(v):
        return f"{num(v['rate'] * 100)} [{num(v['lo'] * 100)}, {num(v['hi'] * 100)}]"

    rates = c["rates"]
    stats = []
    for stat in CAL_STATS:
        up, down = rates.get(f"{stat}+"), rates.get(f"{stat}-")
        if up is None and down is None:
            continue
        stats.append(
            {
                "name": _STAT_LABEL[stat],
                "cells": [
                    table_cell(rate(up) if up else "not measured", up["rate"] if up else math.nan),
                    table_cell(
                        rate(down) if down else "not measured", down["rate"] if down else math.nan
                    ),
                    table_cell(
                        ", ".join(
                            f"{p.get('change', p['name'])} ({p['budget']:+g})"
                            for p in c["points"]
                            if p.get("stat") == stat
                        )
                    ),
                ],
            }
        )
    pooled = {k: rate(rates[k]) if k in rates else "not measured" for k in ("pooled+", "pooled-")}
    db, mde = c["delta_budget"], c["mde"]
    rows = []
    for q in c["points"]:
        b = q["budget"]
        per = pp_ci(q["effect"] / b, *sorted((q["lo"] / b, q["hi"] / b))) if b else "—"
        rows.append(
            {
                "name": q["name"],
                "cells": [
                    table_cell(_STAT_LABEL.get(q.get("stat") or "", "several")),
                    table_cell(f"{b:+g}", b),
                    table_cell(pp_ci(q["effect"], q["lo"], q["hi"]), q["effect"]),
                    table_cell(per, q["effect"] / b if b else math.nan),
                    table_cell(fmt.fmt_int(q["games"]), q["games"]),
                    table_cell(q.get("label", ""), q.get("verdict", ""), cls(q.get("verdict", ""))),
                ],
            }
        )
    card_rows = []
    for k in c.get("cards", []):
        comp = ", ".join(f"{_STAT_LABEL.get(s, s)} {v:+g}" for s, v in k["components"].items())
        used = ", ".join(f"{_curve_name(name)} {w:.0%}" for name, w in k["weights"].items())
        card_rows.append(
            {
                "name": k["card"],
                "cells": [
                    table_cell(fmt_budget(k["budget"]), k["budget"]["value"]),
                    table_cell(
                        f"{num(k['rate'] * 100)} [{num(k['rate_lo'] * 100)}, "
                        f"{num(k['rate_hi'] * 100)}]",
                        k["rate"],
                    ),
                    table_cell(comp or "none"),
                    table_cell(used or "—"),
                ],
            }
        )
    return {
        "n": len(c["points"]),
        "games": c["games"],
        "stats": stats,
        "pooled_up": pooled["pooled+"],
        "pooled_down": pooled["pooled-"],
        "one_rate": (
            f"{num(c['rate']['rate'] * 100)} [{num(c['rate']['lo'] * 100)}, "
            f"{num(c['rate']['hi'] * 100)}]"
        ),
        "delta_up": fmt_budget(db["up"]),
        "delta_down": fmt_budget(db["down"]),
        "delta_short": (
            f"{num(db['up']['value'], 1)} budget points above the budget and "
            f"{num(-db['down']['value'], 1)} below"
        ),
        "mde_first_up": fmt_budget(mde["first"]["up"]),
        "mde_first_down": fmt_budget(mde["first"]["down"]),
        "mde_last_up": fmt_budget(mde["last"]["up"]),
        "mde_last_down": fmt_budget(mde["last"]["down"]),
        "rows": rows,
        "cards": card_rows,
    }


def _outliers(cards: pd.DataFrame, delta: float) -> list[str]:
    """One line per direction and outcome, largest first: the cards shown
    outside the margin ("not equal"), then those detectably different but not
    shown outside it ("not shown equal")."""

    out = []
    m = f"{delta * 100:g} point{'' if delta * 100 == 1 else 's'}"
    for verdict, what in (
        ("not equal", "Shown {direction} by more than {m}"),
        ("not shown equal", "Detectably {direction}, not shown beyond {m}"),
    ):
        for direction in ("stronger", "weaker"):
            d = cards[(cards["verdict"] == verdict) & (cards["direction"] == direction)]
            d = d.reindex(d["effect"].abs().sort_values(ascending=False).index)
            if len(d):
                out.append(
                    what.format(direction=direction, m=m)
                    + f" ({len(d)}): "
                    + ", ".join(f"{r.card} {fmt.fmt_pp(r.effect)}" for r in d.itertuples())
                )
    return out


def _markdown(text: str) -> str:
    """Markdown to HTML with raw HTML disabled (so the file cannot inject
    markup), headings moved under the page's own (h1 → h4)."""
    if not text.strip():
        return ""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return re.sub(
        r"<(/?)h([1-6])>", lambda m: f"<{m.group(1)}h{min(int(m.group(2)) + 3, 6)}>", html
    )


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
        (
            "Plan",
            f"δ = {res.plan.delta * 100:g} points, α = {res.plan.alpha:g}, strategies "
            f"{', '.join(res.plan.strategies)} against {', '.join(res.plan.field)} on every "
            f"reference deck; {res.plan.games:,}–{res.plan.max_games:,} games a run; restricted "
            f"{res.plan.restricted_games:,}; regression {res.plan.regression_pairs:,} deck pairs × "
            f"{res.plan.regression_games} games",
            False,
        ),
        (
            "Runs",
            f"{t.get('runs_simulated', 0):,} simulated, {t.get('runs_read', 0):,} read from the store",
            False,
        ),
        ("Time", f"{t.get('total_s', 0):.1f} s", False),
        ("Date", str(m.get("date")), False),
    ]


def render_power_page(res: PowerResult) -> str:
    """The self-contained HTML page of a power test."""

    return (
        environment(resources.templates(__package__))
        .get_template("trisk_power.html.j2")
        .render(title="Trisk: are all cards equal in power?", p=power_section(res))
    )


def write_power_page(res: PowerResult, path: str | Path) -> Path:
    """Render the page and write it atomically to ``path``."""

    return write_html(Path(path), render_power_page(res))


def result_json(res: PowerResult) -> dict:
    """The CLI's ``--json``: the claim, per-card and per-Primal verdicts."""

    def recs(df: pd.DataFrame | None) -> list[dict]:
        if df is None:
            return []
        out = []
        for rec in df.to_dict(orient="records"):
            out.append(
                {
                    k: (
                        None
                        if isinstance(v, float) and not math.isfinite(v)
                        else (v.item() if isinstance(v, np.generic) else v)
                    )
                    for k, v in rec.items()
                    if k not in ("deck_a", "deck_b")
                }
            )
        return out

    cal = _finite(res.calibration) if res.calibration else None
    return {
        "header": res.header,
        "vs_card": res.vs_card,
        "copies": res.plan.copies,
        "looks": res.looks,
        "alpha_look": res.plan.alpha / max(res.looks, 1),
        "check_strategy": res.plan.check_strategy,
        "calibration": cal,
        "claim": res.claim,
        "primal_claim": res.primal_claim,
        "delta": res.plan.delta,
        "alpha": res.plan.alpha,
        "cards": recs(res.cards),
        "primals": recs(res.primals),
        "cells": recs(res.cells),
        "regression": res.regression_info,
        "finishes": res.finishes,
        "pairing": res.pairing,
        "stages": res.stages,
        "manifest": res.manifest,
    }
