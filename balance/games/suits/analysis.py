"""The four-suits RPG analyses: how hard each Task really is, and how
Struggles play out under scripted policies.

- :func:`run_tasks` (``balance suits tasks``): for every target 2–A, the
  chance that a fresh hand succeeds in suit, Difficult and either way, exact
  (``sims.suits_oracle``) beside simulated; the cards a Task costs; and,
  for characters who attempt the same Task again and again until disabled,
  the chance of success at each attempt and at each deck size, and how many
  attempts and successes a deck lasts.
- :func:`run_struggle` (``balance suits struggle``): the eight scripted
  policies (attack with the highest card or the lowest likely to win; defend
  or absorb; take damage from the hand or the deck) in a round robin under
  the base rules and two variants; each policy's score against the field,
  the effect of each of the three choices (paired by deal), how many attacks
  a struggle lasts until one side is disabled or dead, and what the
  defender's tie advantage is worth.
- :func:`write_page`: one self-contained page with both, the difficulty
  ladder against the rulebook's example Tasks, and what the rules leave open.

Every figure carries a 95% interval and its sample size. Tasks results are
kept in the results store (``_suits_tasks/<key>``) and struggle runs are
ordinary runs, so ``balance report`` rebuilds the page without simulating.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from balance import charts as ch
from balance import config, fmt, resources, runner, tables
from balance.config import load_toml
from balance.errors import UserError
from balance.games.suits import charts as game_charts
from balance.registry import get_game
from balance.report import environment, table_cell, trusted_svg, write_html
from balance.runner import RunSpec, check_games, check_seed, provenance
from balance.stats import (
    cluster_mean,
    hist_mean_ci,
    paired_diff,
    pentanomial_counts,
    pentanomial_score,
    wilson,
)
from balance.store import Damaged, Store, config_hash
from sims import suits
from sims.suits_oracle import task_odds

GAME = "suits"
RANK_KEYS = {**{str(v): v for v in range(2, 11)}, "Jack": 11, "Queen": 12, "King": 13, "Ace": 14}
MODE_LABELS = {
    "in_suit": "in suit",
    "difficult": "Difficult",
    "either": "either way",
    "difficult_only": "only Difficult",
}
ATTACKS = {
    "high": "attack with the highest card",
    "low": "attack with the lowest card likely to win",
}
DEFENCES = {
    "defend": "defend (answer with the lowest card that holds, else the highest)",
    "absorb": "absorb (never answer)",
}
DAMAGES = {"hand": "damage from the hand", "deck": "damage from the deck"}
POLICIES = tuple(f"{a}-{d}-{g}" for a in ATTACKS for d in DEFENCES for g in DAMAGES)
FACTORS = (("attack", ATTACKS), ("defence", DEFENCES), ("damage", DAMAGES))

# What the rulebook leaves open (S5) and where the toolkit had to decide.
OPEN = (
    (
        "The GM's deck",
        "“The GM gets a deck as well, but that's going to work differently. I'll deal "
        "with that a bit later.” Never written: no NPC or monster is modelled; every struggle here is "
        "one player character against another (PVP), where ties go to the defender.",
    ),
    (
        "NPCs without decks",
        "“This works a bit differently for NPCs who don't have their own "
        "individual decks.” How an NPC takes damage is not given.",
    ),
    (
        "Classes",
        "Warrior, Rogue, Mage and Priest are named as the next thing to write; nothing "
        "about them is. No class changes a deck, a hand or a suit here.",
    ),
    (
        "Special abilities",
        "“Unless a special ability is used only the highest card is counted.” "
        "No ability is defined, so only the highest card ever counts, a Difficult pair's too (SD2).",
    ),
    (
        "Recovery",
        "How a disabled character comes back, and whether a deck is ever reshuffled, is "
        "not said. Every figure here is for one deck, from full to disabled.",
    ),
    (
        "Struggles with more than two characters",
        "Turn order for many characters is given "
        "(initiative), but what the others do is a table's choice; only one-on-one is simulated.",
    ),
    (
        "Suits in struggles",
        "The text never says whether an attack must use a suit. S4 says suits "
        "do not matter; the variant suited-struggles tries attacks in Clubs and answers in Hearts (SD2).",
    ),
    (
        "Non-card actions",
        "Movement and other actions that need no card are free and have no effect "
        "on the numbers here.",
    ),
)


def _rules_module():

    return suits


def suit_keys() -> list[str]:
    """The suits' names as written in configs and options, in the engine's order."""
    return [name.lower() for name in _rules_module().SUITS]


def parse_suit(text: str) -> int:
    """``clubs``/``c``/``♣`` → the engine's suit index; a user error otherwise."""
    eng = _rules_module()
    key = str(text).strip().lower()
    for i, name in enumerate(suit_keys()):
        if key in (name, name[0], name[:-1], eng.SUIT_SYMBOLS[i]):
            return i
    raise UserError(f"unknown suit '{text}'; allowed: {', '.join(suit_keys())}")


def examples(path: Path | None = None) -> dict[str, list[str]]:
    """The rulebook's example Tasks: suit → 13 texts for targets 2..A
    (``configs/suits/tasks.toml``)."""

    path = path or get_game(GAME).configs / "tasks.toml"
    data = load_toml(path)
    out = {}
    for suit in suit_keys():
        table = data.get(suit)
        if not isinstance(table, dict):
            raise UserError(f"{path}: missing the table [{suit}]")
        texts = {}
        for key, text in table.items():
            if key not in RANK_KEYS or not isinstance(text, str):
                raise UserError(
                    f"{path}: [{suit}] key '{key}' must be a rank "
                    f"({', '.join(RANK_KEYS)}) with a text"
                )
            texts[RANK_KEYS[key]] = text
        if sorted(texts) != list(range(2, 15)):
            missing = [_rules_module().value_name(t) for t in range(2, 15) if t not in texts]
            raise UserError(f"{path}: [{suit}] lacks the targets {', '.join(missing)}")
        out[suit] = [texts[t] for t in range(2, 15)]
    return out


def _wilson(k, n):

    lo, hi = wilson(np.asarray(k, float), np.maximum(np.asarray(n, float), 1))
    return lo, hi


def _manifest(kind: str, plan: dict, rules: dict, variant: str, elapsed: float, threads) -> dict:

    return {
        **provenance(GAME),
        "kind": kind,
        "plan": plan,
        "variant": variant,
        "rules": rules,
        "seed": plan.get("seed"),
        "timings": {"total_s": round(elapsed, 2), "threads": threads},
    }


# --------------------------------------------------------------------------- tasks
# The most fresh hands and run-down characters per target: 1000 times the
# defaults (200,000 and 20,000), as ``balance study --scale`` allows at most
# 1000. Measured on one core of a shared machine (``balance suits tasks
# --threads 1``): 2,000,000 hands per target took 6 s and 200,000 characters
# per target 29 s, so a run at both bounds is about an hour on one core (less
# on several), and its intervals (about ±0.007 points on 200 million hands)
# are far narrower than any question needs; more is a typo that ran for days.
MAX_TASK_HANDS = 200_000_000
MAX_TASK_CHARACTERS = 20_000_000


@dataclass(frozen=True)
class TasksPlan:
    """What ``run_tasks`` simulates: fresh hands per target, characters run
    down per target and mode, the task's suit, the seed and the rules."""

    variant: str = "base"
    hands: int = 200_000
    characters: int = 20_000
    suit: str = "clubs"
    seed: int = 1

    def check(self) -> TasksPlan:
        if not 1 <= self.hands <= MAX_TASK_HANDS:
            raise UserError(
                f"-n must be a number of hands from 1 to {MAX_TASK_HANDS:,} per target, "
                f"got {self.hands:,}"
            )
        if not 1 <= self.characters <= MAX_TASK_CHARACTERS:
            raise UserError(
                f"--characters must be from 1 to {MAX_TASK_CHARACTERS:,} per target, "
                f"got {self.characters:,}"
            )
        parse_suit(self.suit)

        check_seed(self.seed)
        return self

    def scaled(self, scale: float) -> TasksPlan:
        return TasksPlan(
            self.variant,
            max(1000, int(self.hands * scale)),
            max(200, int(self.characters * scale)),
            self.suit,
            self.seed,
        )


@dataclass
class TasksResult:
    plan: TasksPlan
    fresh: pd.DataFrame  # one row per target: exact and simulated odds per mode, cards
    lasting: pd.DataFrame  # per mode and target: attempts and successes per deck, cards
    by_attempt: pd.DataFrame  # per mode, target and attempt k: success rate
    by_deck: pd.DataFrame  # per mode, target and deck size before the attempt: success rate
    manifest: dict = field(default_factory=dict)
    cached: bool = False

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "tasks_fresh": self.fresh,
            "tasks_lasting": self.lasting,
            "tasks_by_attempt": self.by_attempt,
            "tasks_by_deck": self.by_deck,
        }


def _tasks_config(plan: TasksPlan, rules: dict) -> dict:
    """What the Task analysis's key hashes (its manifest records it: the
    store checks the key on read)."""
    return {
        "kind": "tasks",
        "plan": asdict(plan),
        "rules": rules,
        "engine_version": _rules_module().VERSION,
    }


def _tasks_key(plan: TasksPlan, rules: dict) -> str:

    return config_hash(_tasks_config(plan, rules))


def fresh_table(
    rules_vec, rules: dict, suit: int, hands: int, seed: int, example_texts: list[str]
) -> pd.DataFrame:
    """Exact and simulated odds of a fresh hand for every target (see module)."""

    eng = _rules_module()
    fc = min(int(rules["failed_task_cards"]), int(rules["hand_size"]))
    rows = []
    for t in range(2, 15):
        c = eng.task_fresh(rules_vec, suit, t, seed, 0, hands)
        n = int(c[5])
        exact = task_odds(
            t, int(rules["hand_size"]), int(rules["jokers"]), int(rules["joker_value"]), fc
        )
        sims = {
            "in_suit": int(c[0]),
            "difficult": int(c[1]),
            "either": int(c[2]),
            "difficult_only": int(c[2] - c[0]),
        }
        row: dict[str, Any] = {
            "target": t,
            "target_name": eng.value_name(t),
            "example": example_texts[t - 2],
            "hands": n,
        }
        for mode, k in sims.items():
            p = k / n
            lo, hi = _wilson(k, n)
            ex = float(exact[mode])
            se = math.sqrt(max(ex * (1 - ex), 1e-300) / n)
            row.update(
                {
                    f"{mode}_exact": ex,
                    f"{mode}_sim": p,
                    f"{mode}_lo": float(lo),
                    f"{mode}_hi": float(hi),
                    f"{mode}_k": k,
                    f"{mode}_z": (p - ex) / se
                    if ex * (1 - ex) > 0
                    else (0.0 if p == ex else math.inf),
                }
            )
        fails = n - sims["either"]
        cards = hist_mean_ci([1, 2, fc], [sims["in_suit"], sims["difficult_only"], fails])
        row.update(
            {
                "cards_exact": float(exact["cards"]),
                "cards_sim": cards["mean"],
                "cards_lo": cards["lo"],
                "cards_hi": cards["hi"],
                "joker_exact": float(exact["joker"]),
                "joker_sim": int(c[4]) / n,
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


def run_tasks(
    plan: TasksPlan, threads=None, results=None, store_only: bool = False, progress: bool = False
) -> TasksResult:
    """The Task analysis (see module); read from the store when it holds it."""
    import time

    import polars as pl

    plan.check()
    eng = _rules_module()
    rs = config.resolve_variant(GAME, plan.variant)
    store = Store(results)
    key = _tasks_key(plan, rs.rules)
    names = ("tasks_fresh", "tasks_lasting", "tasks_by_attempt", "tasks_by_deck")

    def parse(manifest, t):

        missing = [k for k in names if k not in t]
        if missing:
            raise Damaged(f"{missing[0]}.parquet is missing")
        return manifest, t

    loaded = store.load("_suits_tasks", key, parse=parse, recompute=not store_only)
    if loaded is not None:
        manifest, t = loaded
        if not store_only:
            _record_tasks(plan, rs, key, results)
        return TasksResult(plan, *(t[k].to_pandas() for k in names), manifest=manifest, cached=True)
    if store_only:
        raise UserError(
            f"the Task analysis ({plan.hands:,} hands, {plan.characters:,} "
            f"characters, seed {plan.seed}) is not in the store {store.root}; run "
            "`balance study` (or `balance suits tasks`) first"
        )
    threads = runner.set_threads(threads)
    t0 = time.perf_counter()
    vec = rs.vector()
    suit = parse_suit(plan.suit)
    texts = examples()[suit_keys()[suit]]
    bar = runner._Progress(13 * (1 + len(eng.MODES)), "suits: task odds", progress, unit="targets")
    try:
        fresh = fresh_table(vec, rs.rules, suit, plan.hands, plan.seed, texts)
        bar.advance(13)
        lasting, by_attempt, by_deck = [], [], []
        for m, mode in enumerate(eng.MODES):
            for t in range(2, 15):
                rd = eng.task_rundown(vec, suit, t, m, plan.seed, 0, plan.characters)
                lasting.append(_lasting_row(mode, t, rd, plan.characters))
                by_attempt += _rate_rows(mode, t, "attempt", rd["by_attempt"], offset=1)
                by_deck += _rate_rows(mode, t, "deck_left", rd["by_deck"], offset=0)
                bar.advance(1)
    finally:
        bar.close()
    res = TasksResult(
        plan, fresh, pd.DataFrame(lasting), pd.DataFrame(by_attempt), pd.DataFrame(by_deck)
    )
    res.manifest = _manifest(
        "tasks", asdict(plan), rs.rules, rs.name, time.perf_counter() - t0, threads
    )
    res.manifest["key_config"] = _tasks_config(plan, rs.rules)
    store.save(
        "_suits_tasks", key, res.manifest, {k: pl.from_pandas(v) for k, v in res.tables().items()}
    )
    _record_tasks(plan, rs, key, results)
    return res


def _record_tasks(plan: TasksPlan, rs, key: str, results) -> None:
    """The Task analysis as an experiment: no runs; the record names its stored tables."""
    from balance import experiments

    experiments.record(
        results,
        GAME,
        "tasks",
        {**asdict(plan), "variant": experiments.ruleset_plan(rs), "entry": f"_suits_tasks/{key}"},
        [],
    )


def _lasting_row(mode: str, t: int, rd: dict, characters: int) -> dict:

    eng = _rules_module()
    ks = np.arange(len(rd["attempts_hist"]))
    att = hist_mean_ci(ks, rd["attempts_hist"])
    suc = hist_mean_ci(ks, rd["successes_hist"])
    ba = rd["by_attempt"]
    cards = int(ba[eng.RD_CARDS].sum())
    attempts = int(ba[eng.RD_ATTEMPTS].sum())
    cards_per_char = cards / characters
    first_lo, first_hi = _wilson(ba[eng.RD_SUCCESS, 0], ba[eng.RD_ATTEMPTS, 0])
    return {
        "mode": mode,
        "target": t,
        "target_name": eng.value_name(t),
        "characters": characters,
        "attempts": att["mean"],
        "attempts_lo": att["lo"],
        "attempts_hi": att["hi"],
        "successes": suc["mean"],
        "successes_lo": suc["lo"],
        "successes_hi": suc["hi"],
        "difficult_successes": int(ba[eng.RD_DIFFICULT].sum()) / characters,
        "first_rate": ba[eng.RD_SUCCESS, 0] / max(ba[eng.RD_ATTEMPTS, 0], 1),
        "first_lo": float(first_lo),
        "first_hi": float(first_hi),
        "cards_per_attempt": cards / max(attempts, 1),
        # cards drawn from one deck barely vary (49 or 50), so the interval of
        # cards per success is that of successes per deck, mapped
        "cards_per_success": cards_per_char / suc["mean"] if suc["mean"] > 0 else math.inf,
        "cards_per_success_lo": cards_per_char / suc["hi"] if suc["hi"] > 0 else math.inf,
        "cards_per_success_hi": cards_per_char / suc["lo"] if suc["lo"] > 0 else math.inf,
    }


def _rate_rows(mode: str, t: int, col: str, counts: np.ndarray, offset: int) -> list[dict]:
    eng = _rules_module()
    n = counts[eng.RD_ATTEMPTS]
    k = counts[eng.RD_SUCCESS]
    lo, hi = _wilson(k, n)
    return [
        {
            "mode": mode,
            "target": t,
            col: i + offset,
            "n": int(n[i]),
            "successes": int(k[i]),
            "difficult": int(counts[eng.RD_DIFFICULT, i]),
            "rate": k[i] / n[i],
            "lo": float(lo[i]),
            "hi": float(hi[i]),
            "cards": int(counts[eng.RD_CARDS, i]),
        }
        for i in range(len(n))
        if n[i] > 0
    ]


# --------------------------------------------------------------------------- struggles
@dataclass(frozen=True)
class StrugglePlan:
    """The policy round robin: under each variant, every pair of policies
    (mirrors included) plays ``games`` struggles on common deals."""

    variants: tuple[str, ...] = ("base", "ties-to-attacker", "to-the-death")
    policies: tuple[str, ...] = POLICIES
    games: int = 10_000
    seed: int = 1

    def check(self) -> StrugglePlan:

        check_games(self.games)
        check_seed(self.seed)
        if len(self.policies) < 2:
            raise UserError("--policies needs at least two policies")
        if len(set(self.policies)) != len(self.policies):
            raise UserError("--policies names a policy twice")
        if not self.variants or len(set(self.variants)) != len(self.variants):
            raise UserError("--variants must name at least one rule set, each once")
        return self

    def scaled(self, scale: float) -> StrugglePlan:
        n = max(200, int(self.games * scale))
        return StrugglePlan(self.variants, self.policies, n + n % 2, self.seed)


@dataclass
class StruggleResult:
    plan: StrugglePlan
    policies: pd.DataFrame  # per variant and policy: score against the field
    matrix: pd.DataFrame  # per variant, policy and opponent: score
    factors: pd.DataFrame  # per variant and choice: paired effect on the score
    length: pd.DataFrame  # per variant and mirror: attacks until disabled / dead, reasons
    ties: pd.DataFrame  # per mirror: ties, the first mover, base vs ties to the attacker
    tie_effect: pd.DataFrame  # per policy: score change when ties go to the attacker
    runs: list = field(default_factory=list)
    manifest: dict = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "struggle_policies": self.policies,
            "struggle_matrix": self.matrix,
            "struggle_factors": self.factors,
            "struggle_length": self.length,
            "struggle_ties": self.ties,
            "struggle_tie_effect": self.tie_effect,
        }


def struggle_specs(plan: StrugglePlan) -> list:

    strategies = {p: config.load_strategy(GAME, p) for p in plan.policies}
    specs = []
    for v in plan.variants:
        rs = config.resolve_variant(GAME, v)
        for i, a in enumerate(plan.policies):
            for b in plan.policies[i:]:
                specs.append(RunSpec(rs, strategies[a], strategies[b], plan.games, plan.seed))
    return specs


def run_struggle(
    plan: StrugglePlan, threads=None, results=None, store_only: bool = False, progress: bool = True
) -> StruggleResult:
    """The struggle analysis (see module), through the results store."""
    import time

    plan.check()
    threads = runner.set_threads(threads)
    t0 = time.perf_counter()
    specs = struggle_specs(plan)
    runs = runner.run_many(
        specs,
        store=Store(results),
        threads=threads,
        progress=progress,
        label=f"suits: {len(specs)} policy matches",
        store_only=store_only,
    )
    if not store_only:  # the experiment: this plan and its runs
        from balance import experiments

        experiments.record(
            results,
            GAME,
            "struggle",
            {
                **asdict(plan),
                "variants": [
                    experiments.ruleset_plan(r) for r in dict.fromkeys(s.ruleset for s in specs)
                ],
            },
            [r.key for r in runs],
        )
    res = analyse_struggle(plan, runs)
    rs = specs[0].ruleset
    res.manifest = _manifest(
        "struggle",
        {**asdict(plan), "variants": list(plan.variants), "policies": list(plan.policies)},
        rs.rules,
        ", ".join(plan.variants),
        time.perf_counter() - t0,
        threads,
    )
    return res


def _run(by, variant, p, x):
    """The run of ``p`` against ``x`` (either way round: only one is played)."""
    return by[(variant, p, x)] if (variant, p, x) in by else by[(variant, x, p)]


def _points(by, variant: str, p: str, x: str) -> np.ndarray:
    """Per-deal half points (0..4) of policy ``p`` against ``x``."""
    r = _run(by, variant, p, x)
    pts = r.pair_points.astype(float)
    return pts if r.spec.a.name == p else 4.0 - pts


def _field(by, variant: str, p: str, pols) -> np.ndarray:
    """Per-deal score of ``p`` against the other policies (mean of their games)."""
    return np.mean([_points(by, variant, p, x) for x in pols if x != p], axis=0) / 4.0


def _hist_mean(hist) -> dict:
    """Mean of a per-game histogram (value = bin index) with its 95% CI."""

    return hist_mean_ci(np.arange(len(hist)), hist)


def analyse_struggle(plan: StrugglePlan, runs: list) -> StruggleResult:
    """Tables of a finished policy round robin (``runs`` from ``struggle_specs``)."""

    eng = _rules_module()
    by = {(r.spec.ruleset.name, r.spec.a.name, r.spec.b.name): r for r in runs}
    pols = list(plan.policies)
    pol_rows, mat_rows, fac_rows, len_rows, tie_rows, eff_rows = [], [], [], [], [], []
    for v in plan.variants:
        for p in pols:
            # a score in [0, 1] per deal: the bounded (design-effect Wilson)
            # interval, which does not collapse where every deal scores alike
            f = _field(by, v, p, pols)
            d = cluster_mean(f, np.ones(f.size), bounds=(0.0, 1.0))
            wins = draws = games = 0
            for x in pols:
                if x == p:
                    continue
                r = _run(by, v, p, x)
                a_side = r.spec.a.name == p
                wins += r.a_wins if a_side else r.b_wins
                draws += r.draws
                games += r.games
            pol_rows.append(
                {
                    "variant": v,
                    "policy": p,
                    "score": d["mean"],
                    "lo": d["lo"],
                    "hi": d["hi"],
                    "games": games,
                    "wins": wins,
                    "draws": draws,
                    "opponents": len(pols) - 1,
                }
            )
            for x in pols:
                pts = _points(by, v, p, x)
                s = pentanomial_score(pentanomial_counts(pts.astype(int)))
                r = _run(by, v, p, x)
                mat_rows.append(
                    {
                        "variant": v,
                        "policy": p,
                        "opponent": x,
                        "score": s["score"],
                        "lo": s["lo"],
                        "hi": s["hi"],
                        "games": r.games,
                        "draws": r.draws,
                    }
                )
        for idx, (name, levels) in enumerate(FACTORS):
            a, b = list(levels)
            diffs = []
            for p in pols:
                parts = p.split("-")
                if len(parts) != len(FACTORS) or parts[idx] != a:
                    continue
                q = "-".join(parts[:idx] + [b] + parts[idx + 1 :])
                if q not in pols:
                    continue
                for x in pols:
                    diffs.append(_points(by, v, q, x) - _points(by, v, p, x))
            if diffs:
                d = paired_diff(np.mean(diffs, axis=0) / 4.0)
                fac_rows.append(
                    {
                        "variant": v,
                        "choice": name,
                        "from_level": a,
                        "to_level": b,
                        "effect": d["mean"],
                        "lo": d["lo"],
                        "hi": d["hi"],
                        "p": d["p"],
                        "deals": d["n"],
                        "comparisons": len(diffs),
                    }
                )
        for p in pols:
            r = by[(v, p, p)]
            e = _hist_mean(r.metrics["exchanges"])
            dis = _hist_mean(r.metrics["disabled_at"])
            dead = _hist_mean(r.metrics["dead_at"])
            # deal-clustered: a mirror's two games of a deal are one game played twice
            rounds = tables.per_game_figures([r])
            row = {
                "variant": v,
                "policy": p,
                "games": r.games,
                "attacks": e["mean"],
                "attacks_lo": e["lo"],
                "attacks_hi": e["hi"],
                "rounds": rounds["rounds_mean"],
                "rounds_lo": rounds["rounds_lo"],
                "rounds_hi": rounds["rounds_hi"],
                "disabled_at": dis["mean"],
                "disabled_lo": dis["lo"],
                "disabled_hi": dis["hi"],
                "disabled_n": dis["n"],
                "dead_at": dead["mean"],
                "dead_lo": dead["lo"],
                "dead_hi": dead["hi"],
                "dead_n": dead["n"],
                "draws": r.draws,
            }
            for i, reason in enumerate(eng.END_NAMES):
                row[reason] = int(r.reasons[i])
            len_rows.append(row)
    if "base" in plan.variants:
        alt = "ties-to-attacker" if "ties-to-attacker" in plan.variants else None
        for p in pols:
            for v in ["base"] + ([alt] if alt else []):
                r = by[(v, p, p)]
                ties = _hist_mean(r.metrics["ties"])
                ans = float(np.arange(len(r.metrics["answers"])) @ r.metrics["answers"])
                tot = float(np.arange(len(r.metrics["ties"])) @ r.metrics["ties"])  # of them tied
                fr = r.metrics["first_result"]
                n = int(fr.sum())
                lo, hi = _wilson(fr[2], n)
                slo, shi = _wilson(tot, ans)
                e = _hist_mean(r.metrics["exchanges"])
                tie_rows.append(
                    {
                        "policy": p,
                        "variant": v,
                        "games": n,
                        "ties": ties["mean"],
                        "ties_lo": ties["lo"],
                        "ties_hi": ties["hi"],
                        "tie_share": tot / ans if ans else math.nan,
                        "tie_share_lo": float(slo),
                        "tie_share_hi": float(shi),
                        "answers": ans,
                        "first_wins": fr[2] / n,
                        "first_lo": float(lo),
                        "first_hi": float(hi),
                        "first_draws": int(fr[1]),
                        "attacks": e["mean"],
                        "attacks_lo": e["lo"],
                        "attacks_hi": e["hi"],
                    }
                )
        if alt:
            for p in pols:
                d = paired_diff(_field(by, alt, p, pols) - _field(by, "base", p, pols))
                eff_rows.append(
                    {
                        "policy": p,
                        "effect": d["mean"],
                        "lo": d["lo"],
                        "hi": d["hi"],
                        "p": d["p"],
                        "deals": d["n"],
                    }
                )
    return StruggleResult(
        plan,
        pd.DataFrame(pol_rows),
        pd.DataFrame(mat_rows),
        pd.DataFrame(fac_rows),
        pd.DataFrame(len_rows),
        pd.DataFrame(tie_rows),
        pd.DataFrame(eff_rows),
        runs=runs,
    )


# --------------------------------------------------------------------------- summary
def findings(tasks: TasksResult | None, struggle: StruggleResult | None) -> list[str]:
    """The page's headline lines, computed from the tables."""

    out = []
    if tasks is not None:
        f = tasks.fresh.set_index("target")
        s = tasks.plan.suit.capitalize()
        out.append(
            f"From a fresh hand, a {s} Task at 2 succeeds in suit {fmt.fmt_pct(f.loc[2, 'in_suit_exact'])} "
            f"of the time, at 10 {fmt.fmt_pct(f.loc[10, 'in_suit_exact'])}, at A "
            f"{fmt.fmt_pct(f.loc[14, 'in_suit_exact'])} (exact). With Difficult pairs allowed: "
            f"{fmt.fmt_pct(f.loc[2, 'either_exact'])}, {fmt.fmt_pct(f.loc[10, 'either_exact'])}, "
            f"{fmt.fmt_pct(f.loc[14, 'either_exact'])}."
        )
        worst = float(f[[f"{m}_z" for m in ("in_suit", "difficult", "either")]].abs().max().max())
        out.append(
            f"Simulation agrees with the exact odds at every target and mode: the largest "
            f"gap is {worst:.1f} standard errors over {len(f) * 3} comparisons "
            f"({fmt.fmt_int(int(f['hands'].iloc[0]))} hands per target)."
        )
        la = tasks.lasting.set_index(["mode", "target"])
        if ("either", 10) in la.index:
            r = la.loc[("either", 10)]
            out.append(
                f"A character who attempts a target-10 Task over and over lasts "
                f"{r['attempts']:.1f} attempts before it is disabled and succeeds "
                f"{r['successes']:.1f} times: {r['cards_per_success']:.1f} cards per "
                f"success."
            )
    if struggle is not None and not struggle.policies.empty:
        b = struggle.policies[struggle.policies["variant"] == struggle.plan.variants[0]]
        best = b.sort_values("score", ascending=False).iloc[0]
        out.append(
            f"Best policy under {best['variant']}: {best['policy']}, "
            f"{fmt.fmt_pct_ci(best['score'], best['lo'], best['hi'])} against the field."
        )
        fa = struggle.factors[struggle.factors["variant"] == struggle.plan.variants[0]]
        for r in fa.itertuples():
            out.append(
                f"Switching {r.choice} from {r.from_level} to {r.to_level} changes the "
                f"score by {fmt.fmt_pp_ci(r.effect, r.lo, r.hi)} ({r.variant})."
            )
        t = struggle.ties
        if not t.empty:
            tb = t[t["variant"] == "base"]
            out.append(
                f"Ties: {fmt.fmt_pct(tb['tie_share'].min())}–"
                f"{fmt.fmt_pct(tb['tie_share'].max())} of answered attacks end in a tie; "
                "with damage equal to the difference a tie deals nothing whoever it goes "
                "to, so the tie rule matters only where a win deals at least 1 "
                "(variant ties-to-attacker)."
            )
    return out


# --------------------------------------------------------------------------- page
def page_model(
    tasks: TasksResult | None, struggle: StruggleResult | None, charts: bool = True
) -> dict:
    """What ``suits.html.j2`` renders."""

    def pct(v, lo, hi, n=None):
        return fmt.fmt_pct_ci(v, lo, hi, n)

    model: dict[str, Any] = {
        "findings": findings(tasks, struggle),
        "open": OPEN,
        "tasks": None,
        "struggle": None,
        "rulings": [],
        "manifest": [],
    }
    if tasks is not None:
        fresh_rows = []
        for r in tasks.fresh.itertuples():
            cells = [table_cell(r.example)]
            for m in ("in_suit", "difficult", "either", "difficult_only"):
                ex = getattr(r, f"{m}_exact")
                z = getattr(r, f"{m}_z")
                cells.append(table_cell(fmt.fmt_pct(ex, 2), ex))
                cells.append(
                    table_cell(
                        pct(getattr(r, f"{m}_sim"), getattr(r, f"{m}_lo"), getattr(r, f"{m}_hi")),
                        getattr(r, f"{m}_sim"),
                        "" if abs(z) < 3 else "neg",
                        title=f"z = {z:+.2f}",
                    )
                )
            cells.append(table_cell(f"{r.cards_exact:.3f}", r.cards_exact))
            cells.append(
                table_cell(f"{r.cards_sim:.3f} [{r.cards_lo:.3f}, {r.cards_hi:.3f}]", r.cards_sim)
            )
            cells.append(table_cell(fmt.fmt_int(r.hands), r.hands))
            fresh_rows.append({"name": r.target_name, "cells": cells})
        last_rows = []
        for r in tasks.lasting.itertuples():
            last_rows.append(
                {
                    "name": f"{r.target_name}",
                    "cells": [
                        table_cell(MODE_LABELS[r.mode], r.mode),
                        table_cell(pct(r.first_rate, r.first_lo, r.first_hi), r.first_rate),
                        table_cell(
                            f"{r.attempts:.1f} [{r.attempts_lo:.1f}, {r.attempts_hi:.1f}]",
                            r.attempts,
                        ),
                        table_cell(
                            f"{r.successes:.2f} [{r.successes_lo:.2f}, {r.successes_hi:.2f}]",
                            r.successes,
                        ),
                        table_cell(f"{r.difficult_successes:.2f}", r.difficult_successes),
                        table_cell(f"{r.cards_per_attempt:.2f}", r.cards_per_attempt),
                        table_cell(
                            f"{r.cards_per_success:.1f} [{r.cards_per_success_lo:.1f}, "
                            f"{r.cards_per_success_hi:.1f}]"
                            if math.isfinite(r.cards_per_success)
                            else "never succeeds",
                            r.cards_per_success if math.isfinite(r.cards_per_success) else 1e9,
                        ),
                        table_cell(fmt.fmt_int(r.characters), r.characters),
                    ],
                }
            )
        model["tasks"] = {
            "plan": tasks.plan,
            "fresh": fresh_rows,
            "lasting": last_rows,
            "suit": tasks.plan.suit.capitalize(),
            "chart_ladder": None,
            "chart_rundown": None,
            "manifest": _manifest_items(tasks.manifest),
        }
        if charts:
            ex = examples()
            model["tasks"]["chart_ladder"] = trusted_svg(
                "suits-ladder",
                ch.save(
                    game_charts.suits_ladder_chart(tasks.fresh, ex, tasks.plan.suit),
                    Path("suits-ladder"),
                    write=False,
                ),
            )
            model["tasks"]["chart_rundown"] = trusted_svg(
                "suits-rundown",
                ch.save(
                    game_charts.suits_rundown_chart(tasks.by_deck, tasks.plan.suit),
                    Path("suits-rundown"),
                    write=False,
                ),
            )
        model["rulings"] = tasks.manifest.get("rulings", [])
        model["manifest"] += [("Tasks", i[0], i[1], i[2]) for i in _manifest_items(tasks.manifest)]
    if struggle is not None:
        v0 = struggle.plan.variants[0]
        pol_rows = []
        for r in struggle.policies.itertuples():
            pol_rows.append(
                {
                    "name": r.policy,
                    "cells": [
                        table_cell(r.variant, r.variant),
                        table_cell(
                            pct(r.score, r.lo, r.hi),
                            r.score,
                            "pos" if r.lo > 0.5 else "neg" if r.hi < 0.5 else "",
                        ),
                        table_cell(fmt.fmt_int(r.wins), r.wins),
                        table_cell(fmt.fmt_int(r.draws), r.draws),
                        table_cell(fmt.fmt_int(r.games), r.games),
                    ],
                }
            )
        fac_rows = [
            {
                "name": r.choice,
                "cells": [
                    table_cell(r.variant),
                    table_cell(f"{r.from_level} → {r.to_level}"),
                    table_cell(
                        fmt.fmt_pp_ci(r.effect, r.lo, r.hi),
                        r.effect,
                        "pos" if r.lo > 0 else "neg" if r.hi < 0 else "",
                    ),
                    table_cell(fmt.fmt_p(r.p), r.p),
                    table_cell(fmt.fmt_int(r.deals), r.deals),
                    table_cell(str(r.comparisons), r.comparisons),
                ],
            }
            for r in struggle.factors.itertuples()
        ]
        len_rows = [
            {
                "name": r.policy,
                "cells": [
                    table_cell(r.variant),
                    table_cell(
                        f"{r.attacks:.1f} [{r.attacks_lo:.1f}, {r.attacks_hi:.1f}]", r.attacks
                    ),
                    table_cell(f"{r.rounds:.1f} [{r.rounds_lo:.1f}, {r.rounds_hi:.1f}]", r.rounds),
                    table_cell(
                        f"{r.disabled_at:.1f} [{r.disabled_lo:.1f}, {r.disabled_hi:.1f}]"
                        if r.disabled_n
                        else "–",
                        r.disabled_at,
                    ),
                    table_cell(
                        f"{r.dead_at:.1f} [{r.dead_lo:.1f}, {r.dead_hi:.1f}] (n = {fmt.fmt_int(r.dead_n)})"
                        if r.dead_n
                        else "none died",
                        r.dead_at if r.dead_n else -1,
                    ),
                    table_cell(fmt.fmt_int(r.disabled), r.disabled),
                    table_cell(fmt.fmt_int(r.dead), r.dead),
                    table_cell(fmt.fmt_int(r.both_disabled), r.both_disabled),
                    table_cell(fmt.fmt_int(r.round_cap), r.round_cap),
                    table_cell(fmt.fmt_int(r.games), r.games),
                ],
            }
            for r in struggle.length.itertuples()
        ]
        tie_rows = [
            {
                "name": r.policy,
                "cells": [
                    table_cell(r.variant),
                    table_cell(f"{r.ties:.2f} [{r.ties_lo:.2f}, {r.ties_hi:.2f}]", r.ties),
                    table_cell(
                        pct(r.tie_share, r.tie_share_lo, r.tie_share_hi)
                        if r.answers
                        else "no answers",
                        r.tie_share if r.answers else -1,
                    ),
                    table_cell(pct(r.first_wins, r.first_lo, r.first_hi), r.first_wins),
                    table_cell(fmt.fmt_int(r.first_draws), r.first_draws),
                    table_cell(
                        f"{r.attacks:.1f} [{r.attacks_lo:.1f}, {r.attacks_hi:.1f}]", r.attacks
                    ),
                    table_cell(fmt.fmt_int(r.games), r.games),
                ],
            }
            for r in struggle.ties.itertuples()
        ]
        eff_rows = [
            {
                "name": r.policy,
                "cells": [
                    table_cell(
                        fmt.fmt_pp_ci(r.effect, r.lo, r.hi),
                        r.effect,
                        "pos" if r.lo > 0 else "neg" if r.hi < 0 else "",
                    ),
                    table_cell(fmt.fmt_p(r.p), r.p),
                    table_cell(fmt.fmt_int(r.deals), r.deals),
                ],
            }
            for r in struggle.tie_effect.itertuples()
        ]
        model["struggle"] = {
            "plan": struggle.plan,
            "policies": pol_rows,
            "factors": fac_rows,
            "length": len_rows,
            "ties": tie_rows,
            "tie_effect": eff_rows,
            "first_variant": v0,
            "chart_policies": None,
            "chart_matrix": None,
            "descriptions": [(p, _describe(p)) for p in struggle.plan.policies],
        }
        if charts:
            model["struggle"]["chart_policies"] = trusted_svg(
                "suits-policies",
                ch.save(
                    game_charts.suits_policy_chart(struggle.policies),
                    Path("suits-policies"),
                    write=False,
                ),
            )
            m = struggle.matrix[struggle.matrix["variant"] == v0]
            model["struggle"]["chart_matrix"] = trusted_svg(
                "suits-matrix",
                ch.save(
                    ch.matrix_heatmap(
                        m.rename(
                            columns={
                                "policy": "a",
                                "opponent": "b",
                                "score": "winrate",
                                "lo": "winrate_lo",
                                "hi": "winrate_hi",
                            }
                        ),
                        v0,
                        order=list(struggle.plan.policies),
                        what="score",
                        subtitle="% score of the row policy (win + ½ draw), paired deals; ± = 95% "
                        f"pentanomial half-width; n = {m['games'].min():,} games per pair",
                    ),
                    Path("suits-matrix"),
                    write=False,
                ),
            )
        if not model["rulings"] and struggle.runs:
            model["rulings"] = struggle.runs[0].manifest.get("rulings", [])
        model["manifest"] += [
            ("Struggles", i[0], i[1], i[2]) for i in _manifest_items(struggle.manifest)
        ]
    return model


def _describe(policy: str) -> str:
    """A scripted policy's three choices in words; any other strategy's own description."""
    parts = policy.split("-")
    if len(parts) == 3 and parts[0] in ATTACKS and parts[1] in DEFENCES and parts[2] in DAMAGES:
        a, d, g = parts
        return f"{ATTACKS[a].capitalize()}; {DEFENCES[d]}; {DAMAGES[g]}."

    return config.load_strategy(GAME, policy).description


def _manifest_items(m: dict) -> list[tuple[str, str, bool]]:
    t = m.get("timings", {})
    plan = m.get("plan", {})
    return [
        ("Command", str(m.get("command", "")), True),
        ("Plan", ", ".join(f"{k} = {v}" for k, v in plan.items()), False),
        ("Rules", str(m.get("variant")), False),
        (
            "Engine",
            f"{m.get('engine')} {m.get('engine_version')} (toolkit {m.get('toolkit_version')})",
            False,
        ),
        ("Time", f"{t.get('total_s', 0):.1f} s on {t.get('threads')} threads", False),
        ("Date", str(m.get("date")), False),
    ]


def render_page(tasks: TasksResult | None, struggle: StruggleResult | None) -> str:

    return (
        environment(resources.templates(__package__))
        .get_template("suits.html.j2")
        .render(title="The four-suits RPG: Task odds and Struggles", p=page_model(tasks, struggle))
    )


def write_page(tasks: TasksResult | None, struggle: StruggleResult | None, path) -> Path:
    """Render the page fully, then write it atomically."""

    return write_html(Path(path), render_page(tasks, struggle))
