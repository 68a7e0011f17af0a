"""The equilibrium search (``balance/equilibrium.py``), measured.

- Matrix toys with known answers go through the same loop, Nash solver and
  stopping rule as the games (:func:`double_oracle`, :func:`decide`,
  :func:`balance.stats.nash_maxent`): the payoffs are a known matrix
  restricted to the population, and the oracle is the exact best response
  over every pure strategy of the full matrix, its gain blurred by a
  simulated sampling noise of a stated SE (:class:`MatrixOracle`).
- The stopping rule's error rate and power, simulated through :func:`decide`
  and through whole :func:`double_oracle` runs.
- High Card (``tests/toygame/``), registered from the test, through
  :func:`equilibrium` itself: the curve, the final mixture's exploitability
  checked against every behaviour the toy's kernel can play, bit-for-bit
  reruns, an interrupted run resumed from the store.
- The mixture's score in :mod:`balance.tune`, the population files, and
  what the equilibrium says (stability, play, the content table on Clash of
  Steel).
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, replace

import numpy as np
import pytest

from balance import config, runner, stats, tune
from balance import equilibrium as E
from balance.errors import UserError
from balance.stats.normal import z_crit

EPS = E.EPSILON  # 0.02: the default ε, two points of score
Z = z_crit(0.05)  # 1.96: the gain's interval is mean ± Z·SE


def phi(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


# ---- the matrix toys --------------------------------------------------------------------
@dataclass(frozen=True)
class Pure:
    """A pure strategy of a matrix toy: its row in the full matrix."""

    name: str
    index: int


class MatrixOracle:
    """The payoffs and the oracle of :func:`double_oracle` for a known
    antisymmetric matrix ``M`` (score − ½ of each row against each column).

    ``payoffs(members)`` is ``M`` restricted to the population (``np.ix_``).
    ``respond(members, p, k)`` is the exact best response over every pure
    strategy of ``M`` to the mixture (ties: the first), with a gain whose
    estimate is the exact gain plus Normal(0, ``se``) noise (seeded) and
    whose interval is ``mean ± 1.96·se``: what a fresh-deal measurement of a
    response's gain would give, with the oracle itself never wrong."""

    def __init__(self, M, names, se: float, seed: int = 0):
        self.M = np.asarray(M, float)
        assert np.allclose(self.M, -self.M.T)
        self.names = list(names)
        self.se = float(se)
        self.rng = np.random.default_rng(seed)

    def pure(self, name: str) -> Pure:
        return Pure(name, self.names.index(name))

    def payoffs(self, members) -> np.ndarray:
        idx = [m.index for m in members]
        return self.M[np.ix_(idx, idx)]

    def full(self, members, p) -> np.ndarray:
        """The mixture over every pure strategy of ``M``."""
        q = np.zeros(len(self.names))
        for m, x in zip(members, p, strict=True):
            q[m.index] += x
        return q

    def exact(self, members, p) -> tuple[int, float]:
        v = self.M @ self.full(members, p)  # each pure strategy's payoff against the mixture
        b = int(np.argmax(v))
        return b, float(v[b])

    def respond(self, members, p, k):
        b, g = self.exact(members, p)
        mean = g + self.se * float(self.rng.standard_normal())
        gain = {
            "mean": mean,
            "lo": mean - Z * self.se,
            "hi": mean + Z * self.se,
            "se": self.se,
            "n": 0,
        }
        return Pure(self.names[b], b), gain, {"true": g}

    def run(self, start, **kw) -> E.Loop:
        return E.double_oracle(
            [self.pure(s) for s in start], self.payoffs, self.respond, epsilon=EPS, **kw
        )


def rps(a: float, b: float, c: float) -> np.ndarray:
    """Rock, paper, scissors (in that order) where rock beats scissors by
    ``a``, scissors beats paper by ``b`` and paper beats rock by ``c``."""
    R, P, S = range(3)
    M = np.zeros((3, 3))
    M[R, S], M[S, P], M[P, R] = a, b, c
    return M - M.T


RPS = ["rock", "paper", "scissors"]


def test_rock_paper_scissors_from_rock_ends_at_the_uniform_mixture():
    """From {rock}: paper answers rock, scissors answers paper, and the three
    are the uniform mixture, against which no pure strategy gains (exact
    gain 0; measured with SE ε/4)."""
    oracle = MatrixOracle(rps(0.5, 0.5, 0.5), RPS, se=EPS / 4, seed=1)
    loop = oracle.run(["rock"], iterations=8)
    assert [s.response for s in loop.steps[:2]] == ["paper", "scissors"]
    assert [s.decision for s in loop.steps] == ["add", "add", "equilibrium"]
    assert loop.status == "equilibrium"
    assert [m.name for m in loop.members] == RPS
    np.testing.assert_allclose(loop.mixture, [1 / 3, 1 / 3, 1 / 3], atol=1e-7)
    assert oracle.exact(loop.members, loop.mixture)[1] == pytest.approx(0.0, abs=1e-7)
    g = loop.exploitability
    assert g["lo"] <= 0.0 <= g["hi"] <= EPS
    assert loop.steps[-1].as_dict()["support"] == 3


def test_a_biased_rock_paper_scissors_ends_at_its_known_mixture():
    """Rock beats scissors by a = 0.1, scissors beats paper by b = 0.2, paper
    beats rock by c = 0.3. At the mixture (r, p, s) every pure strategy
    scores 0 (a fully mixed equilibrium of a zero-sum game):
    rock: a·s − c·p = 0, paper: c·r − b·s = 0, scissors: b·p − a·r = 0,
    so r : p : s = b : a : c = 2 : 1 : 3, i.e. (1/3, 1/6, 1/2); unique, as
    the 3 × 3 matrix has rank 2 and the mixture is interior."""
    oracle = MatrixOracle(rps(0.1, 0.2, 0.3), RPS, se=EPS / 4, seed=2)
    loop = oracle.run(["rock"], iterations=8)
    assert [s.response for s in loop.steps[:2]] == ["paper", "scissors"]
    assert loop.status == "equilibrium" and len(loop.steps) == 3
    np.testing.assert_allclose(loop.mixture, [1 / 3, 1 / 6, 1 / 2], atol=1e-7)
    assert loop.exploitability["hi"] <= EPS


def test_a_dominant_strategy_is_found_in_one_iteration_and_named_dominant():
    """D beats X by 0.3 and Y by 0.1 (X beats Y by 0.2): from the dominated X,
    the first response is D, D alone is the equilibrium (support 1), and
    :func:`equilibrium.dominant` says "yes" and names D. Its "no" is checked
    on rock-paper-scissors, where every member loses to another."""
    X, Y, D = range(3)
    M = np.zeros((3, 3))
    M[X, Y], M[D, X], M[D, Y] = 0.2, 0.3, 0.1
    oracle = MatrixOracle(M - M.T, ["X", "Y", "D"], se=EPS / 4, seed=3)
    loop = oracle.run(["X"], iterations=8)
    assert [s.decision for s in loop.steps] == ["add", "equilibrium"]  # one addition
    assert [m.name for m in loop.members] == ["X", "D"]
    np.testing.assert_array_equal(loop.mixture, [0.0, 1.0])
    assert loop.steps[-1].as_dict()["support"] == 1
    verdict = E.dominant(
        loop.members,
        loop.mixture,
        loop.exploitability,
        loop.status,
        EPS,
        E.matchups(loop.members, sampled_points(oracle, loop.members)),
    )
    assert verdict["status"] == "yes" and verdict["strategy"] == "D"

    oracle = MatrixOracle(rps(0.3, 0.3, 0.3), RPS, se=EPS / 4, seed=4)
    loop = oracle.run(["rock"], iterations=8)
    assert loop.status == "equilibrium"
    worst = E.matchups(loop.members, sampled_points(oracle, loop.members))
    verdict = E.dominant(loop.members, loop.mixture, loop.exploitability, loop.status, EPS, worst)
    assert verdict["status"] == "no"


def sampled_points(oracle: MatrixOracle, members, deals: int = 400, seed: int = 0) -> dict:
    """Per-deal points (0..4, a seat-swapped pair) of each pairing i < j,
    drawn Binomial(4, ½ + M[i, j]): what a game's matrix would store."""
    rng = np.random.default_rng(seed)
    out = {}
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            out[(a.name, b.name)] = rng.binomial(4, 0.5 + oracle.M[a.index, b.index], deals)
    return out


def test_a_spent_budget_says_budget_and_reports_the_gap():
    """Two iterations on rock-paper-scissors from {rock}: scissors still beats
    {rock, paper}'s mixture (paper alone) by 0.5 when the budget ends; the
    status is "budget", the response is not added, and the exploitability
    reported is that gap, measured against the final mixture."""
    oracle = MatrixOracle(rps(0.5, 0.5, 0.5), RPS, se=EPS / 4, seed=5)
    loop = oracle.run(["rock"], iterations=2)
    assert loop.status == "budget"
    assert [s.decision for s in loop.steps] == ["add", "budget"]
    assert [m.name for m in loop.members] == ["rock", "paper"]
    np.testing.assert_array_equal(loop.mixture, [0.0, 1.0])
    assert loop.steps[-1].response == "scissors"
    g = loop.exploitability
    assert g["lo"] <= 0.5 <= g["hi"] and g["lo"] > EPS


def test_a_spent_budget_is_audited_and_the_gap_shown_is_the_audits():
    """When the budget runs out, the audit measures the final mixture once
    more (the loop's own search can understate the gap: a weaker search finds
    less): the status stays "budget", nothing more joins, and the
    exploitability shown is the audit's gain against that final mixture.
    Rock-paper-scissors from {rock}, two iterations: the loop's search sees
    scissors at 0.5 minus a bias of 0.3 (a weak search), the exact audit 0.5."""
    exact = MatrixOracle(rps(0.5, 0.5, 0.5), RPS, se=EPS / 4, seed=5)
    weak = MatrixOracle(rps(0.5, 0.5, 0.5), RPS, se=EPS / 4, seed=6)

    def biased(members, p, k):
        r, g, d = weak.respond(members, p, k)
        return r, {**g, "mean": g["mean"] - 0.3, "lo": g["lo"] - 0.3, "hi": g["hi"] - 0.3}, d

    loop = E.double_oracle(
        [exact.pure("rock")], exact.payoffs, biased, epsilon=EPS, iterations=2, audit=exact.respond
    )
    assert loop.status == "budget"
    assert [s.decision for s in loop.steps] == ["add", "budget"]
    assert [m.name for m in loop.members] == ["rock", "paper"]
    last = loop.steps[-1]
    assert last.audit is not None and last.audit["response"] == "scissors"
    assert last.gain["mean"] < 0.3  # the loop's search understated the gap
    g = loop.exploitability
    assert g == last.audit["gain"] and g["lo"] <= 0.5 <= g["hi"]


def test_bad_loop_settings_are_refused():
    oracle = MatrixOracle(rps(0.5, 0.5, 0.5), RPS, se=EPS / 4)
    for kw, word in (({"iterations": 0}, "--iterations"), ({"epsilon": 0.5}, "--epsilon")):
        with pytest.raises(UserError, match=word):
            E.double_oracle([oracle.pure("rock")], oracle.payoffs, oracle.respond, **kw)
    with pytest.raises(UserError, match="at least one strategy"):
        E.double_oracle([], oracle.payoffs, oracle.respond)


# ---- a search that finds nothing proves nothing ---------------------------------------------
class FailingOracle(MatrixOracle):
    """An oracle whose search fails: it answers the *worst* pure strategy
    against the mixture (a negative gain, its interval wholly below ε), the
    way a search stuck far from every good response does. ``flag``: the
    oracle knows its best fell below the population's best member (as
    :func:`balance.oracle.best_response` measures it) and says so."""

    def __init__(self, *a, flag: bool = True, **kw):
        super().__init__(*a, **kw)
        self.flag = flag

    def respond(self, members, p, k):
        v = self.M @ self.full(members, p)
        b = int(np.argmin(v))
        g = float(v[b])
        gain = {"mean": g, "lo": g - Z * self.se, "hi": g + Z * self.se, "se": self.se, "n": 0}
        return Pure(self.names[b], b), gain, {"true": g, "failed": self.flag}


def test_a_failed_search_is_never_evidence_of_an_equilibrium():
    """The uniform mixture of rock, paper, scissors and a dominated Y is far from
    the game's equilibrium (X beats every one of them by 0.2), but the failing
    oracle answers Y at a gain wholly below 0, well inside ε: the old rule read
    that as "an equilibrium". A failed search is no evidence: the step says
    "search failed", the loop ends "not shown", and no audit can be skipped to
    make it otherwise."""
    X, names = exploitable_rps(0.2)
    M = np.zeros((5, 5))  # ... and Y, which loses to each of the four by 0.1
    M[:4, :4] = X
    M[4, :4], M[:4, 4] = -0.1, 0.1
    names = [*names, "Y"]
    oracle = FailingOracle(M, names, se=EPS / 4, seed=1)
    loop = E.double_oracle(
        [oracle.pure(s) for s in RPS], oracle.payoffs, oracle.respond, epsilon=EPS, iterations=5
    )
    assert loop.steps[0].response == "Y"
    assert loop.steps[0].gain["hi"] < 0  # what the old rule took for evidence
    assert E.decide(loop.steps[0].gain, EPS) == "equilibrium"  # the rule without the flag
    assert [s.decision for s in loop.steps] == ["search failed"]
    assert loop.status == "not shown"
    # the audit is not asked to rescue a failed search: nothing is claimed either way
    audited = E.double_oracle(
        [oracle.pure(s) for s in RPS],
        oracle.payoffs,
        oracle.respond,
        epsilon=EPS,
        audit=MatrixOracle(M, names, se=EPS / 4, seed=2).respond,
    )
    assert audited.status == "not shown" and audited.steps[0].audit is None


def test_the_audit_overrules_a_silent_search():
    """A search that misses X (it answers a member, gain 0) declares an
    equilibrium within ε on its own; the audit (the exact oracle: an
    independent search that does not miss) finds X beating the mixture by
    ε + 3 SE: X joins, the loop goes on, and the next step's audit confirms X
    alone. The exploitability reported is always the audit's."""
    M, names = exploitable_rps(EPS + 3 * EPS / 4)

    def blind(members, p, k):  # the best member, gain 0 exactly: nothing better found
        i = int(np.argmax(p))
        gain = {"mean": 0.0, "lo": -0.005, "hi": 0.005, "se": 0.0025, "n": 0}
        return members[i], gain, {"member": True}

    exact = MatrixOracle(M, names, se=EPS / 4, seed=3)
    loop = E.double_oracle(
        [exact.pure(s) for s in RPS],
        exact.payoffs,
        blind,
        epsilon=EPS,
        iterations=5,
        audit=exact.respond,
    )
    first = loop.steps[0]
    assert first.audit is not None and first.audit["response"] == "X"
    assert first.decision == "add" and first.response == "X" and first.detail["by"] == "audit"
    assert loop.status == "equilibrium" and [m.name for m in loop.members] == [*RPS, "X"]
    assert loop.exploitability == loop.steps[-1].audit["gain"]
    assert exact.exact(loop.members, loop.mixture)[1] == pytest.approx(0.0, abs=1e-7)


def test_a_member_that_seems_to_gain_is_not_added_again():
    """The best found is a member of the population (nothing better) and its
    interval reaches past ε: it cannot join again; "not shown"."""
    g = {"mean": 0.015, "lo": 0.005, "hi": 0.025}
    assert E.decide(g, EPS, member=True) == "not shown"
    assert E.decide(g, EPS) == "add"
    assert E.decide({"mean": -0.05, "lo": -0.06, "hi": -0.04}, EPS, failed=True) == (
        "search failed"
    )


@pytest.mark.slow  # 4,000 simulated loops, about 2 s
def test_an_independent_audit_multiplies_the_miss_rates_simulated():
    """The search error, simulated: a loop oracle that misses the one response
    past ε (X, beating the mixture by ε + 3 SE) with probability 0.3, and an
    audit that misses it with probability 0.2 on its own, independent draws.
    A wrong claim needs both to miss: 0.3 × 0.2 = 6% of runs (measured over
    4,000 runs; within 4 binomial SEs), where the loop alone would claim in 30%.
    The audit's power, not the stopping rule's level, bounds the search error:
    each engine's oracle power is measured in tests/core/test_oracle_power.py."""
    M, names = exploitable_rps(EPS + 3 * EPS / 4)
    runs, wrong, loop_only = 4000, 0, 0
    for seed in range(runs):
        exact = MatrixOracle(M, names, se=EPS / 4, seed=seed)
        rng = np.random.default_rng(10_000 + seed)

        def missing(rate, rng=rng, exact=exact):
            def respond(members, p, k):
                if rng.random() < rate:  # a miss: the best member, nothing better
                    i = int(np.argmax(p))
                    return members[i], {"mean": 0.0, "lo": -0.01, "hi": 0.01}, {"member": True}
                return exact.respond(members, p, k)

            return respond

        loop = E.double_oracle(
            [exact.pure(s) for s in RPS],
            exact.payoffs,
            missing(0.3),
            epsilon=EPS,
            iterations=2,  # the first step is not the last: its audit checks a claim only
            audit=missing(0.2),
        )
        wrong += loop.steps[0].decision == "equilibrium"  # claimed while X beats the mixture
        loop_only += loop.steps[0].audit is not None
    rate = wrong / runs
    print(f"wrong claims {wrong}/{runs} = {rate:.3%}; the loop alone claimed {loop_only}")
    assert abs(rate - 0.06) <= 4 * math.sqrt(0.06 * 0.94 / runs)
    assert abs(loop_only / runs - 0.3) <= 4 * math.sqrt(0.3 * 0.7 / runs)


# ---- the stopping rule's error rate and power --------------------------------------------
def declared_rate(true_gain: float, se: float, runs: int, seed: int) -> float:
    """The share of ``runs`` where :func:`decide` declares an equilibrium for
    a gain estimated Normal(``true_gain``, ``se``), interval mean ± 1.96·se."""
    rng = np.random.default_rng(seed)
    means = true_gain + se * rng.standard_normal(runs)
    declared = sum(
        E.decide({"mean": m, "lo": m - Z * se, "hi": m + Z * se}, EPS) == "equilibrium"
        for m in means
    )
    return declared / runs


def test_the_stopping_rule_error_rate_simulated():
    """A mixture truly ε + k·SE exploitable is declared an equilibrium when
    its estimate falls (1.96 + k)·SE low: in Φ(−1.96 − k) of runs. Measured
    on 20,000 runs each (SE = ε/4 = 0.5 points): k = 3: 0 of 20,000, twice
    (theory 3.5e-7), so ≥ 95% (in fact all) not declared; k = 1: 0.16%
    (theory 0.15%); k = 0, exactly ε exploitable: 2.6% (theory 2.5%): the rule is a
    one-sided 2.5% test of "exploitability ≤ ε". Each measured rate is also
    checked within 4 binomial SEs of its theory."""
    se, runs = EPS / 4, 20_000
    for k, seed in ((3, 11), (1, 12), (0, 13)):
        rate = declared_rate(EPS + k * se, se, runs, seed)
        theory = phi(-Z - k)
        assert rate <= 0.05
        assert abs(rate - theory) <= 4 * math.sqrt(theory * (1 - theory) / runs) + 1 / runs
    assert declared_rate(EPS + 3 * se, se, runs, 14) < 2 / runs  # expected 0.007 declared


def test_the_stopping_rule_power_simulated():
    """A true equilibrium (gain 0) measured with SE = ε/4 is declared when
    its estimate is below ε − 1.96·SE = 2.04 SE: Φ(2.04) = 97.9% of runs;
    measured 98.0% of 20,000."""
    rate = declared_rate(0.0, EPS / 4, 20_000, 21)
    assert rate >= 0.95
    assert abs(rate - phi(4 - Z)) <= 4 * math.sqrt(0.0207 * 0.9793 / 20_000)


def exploitable_rps(delta: float) -> tuple[np.ndarray, list[str]]:
    """Rock-paper-scissors and X, which beats each of the three by ``delta``:
    the uniform mixture of the three is exactly ``delta`` exploitable (by X),
    and X alone is the game's equilibrium."""
    M = np.zeros((4, 4))
    M[:3, :3] = rps(0.5, 0.5, 0.5)
    M[3, :3] = delta
    M[:3, 3] = -delta
    return M, [*RPS, "X"]


@pytest.mark.slow  # 600 loops, about 2 s
def test_the_whole_loop_error_rate_and_power_simulated():
    """600 :func:`double_oracle` runs from {rock, paper, scissors}, whose
    uniform mixture is truly ε + 3·SE exploitable (SE = ε/4): a run wrongly
    stops at it in 0 of 600 (≥ 95% required: the rule's rate is 3.5e-7);
    every other run adds X, and X alone, a true equilibrium, is declared at
    the next step in 587 of 600 runs, 97.8% (theory 97.9%; ≥ 95% required); the rest
    add X again and stop one step later."""
    se = EPS / 4
    M, names = exploitable_rps(EPS + 3 * se)
    runs, wrong, second, reached = 600, 0, 0, 0
    for seed in range(runs):
        oracle = MatrixOracle(M, names, se=se, seed=seed)
        loop = oracle.run(RPS, iterations=6)
        assert loop.steps[0].detail["true"] == pytest.approx(EPS + 3 * se)
        if loop.steps[0].decision == "equilibrium":
            wrong += 1
            continue
        assert loop.steps[0].response == "X"
        reached += 1
        second += loop.steps[1].decision == "equilibrium"
        assert loop.status == "equilibrium"
        assert oracle.exact(loop.members, loop.mixture)[1] == pytest.approx(0.0, abs=1e-7)
    print(f"wrongly declared {wrong}/{runs}; X declared at once {second}/{reached}")
    assert 1 - wrong / runs >= 0.95 and wrong <= 1
    assert second / reached >= 0.95


# ---- High Card, the toy fifth game ---------------------------------------------------------
# Small enough to stay a few seconds; step 0.3 of the range: the toy's one weight is a
# threshold on integer cards (a plateau between integers), and the default step (0.05 of
# [0, 10], half a card) leaves a search standing on its start's plateau.
TOY_SETTINGS = dict(
    epsilon=EPS,
    iterations=5,
    budget=12,
    restarts=2,  # two restarts (and an audit of four): the toy has one weight
    games=400,
    search_games=200,
    screen_games=100,
    confirm_games=2000,
    step=0.3,
    seed=1,
    progress=False,
)
NAMED = ("bold", "cautious", "never")


def named(*names) -> list:
    return [config.load_strategy("toy", n) for n in names or NAMED]


def base_rules():
    return config.resolve_variant("toy", "base")


@pytest.fixture(scope="module")
def toy_eq(toy, tmp_path_factory):
    """The toy's equilibrium from its three named strategies, and its store."""
    store = tmp_path_factory.mktemp("eq-store")
    with runner.tally() as t:
        eq = E.equilibrium("toy", base_rules(), named(), results=store, **TOY_SETTINGS)
    return eq, store, t


def test_the_toy_kernel_is_tunable(toy):
    """High Card's one weight, boost_below, had no range: the search would have
    had nothing to tune; ``tests/toygame/configs/tune.toml`` gives it [0, 10]."""
    sp = tune.space("toy", named("bold")[0])
    assert [(p.key, p.lo, p.hi) for p in sp.params] == [("boost_below", 0.0, 10.0)]


@pytest.mark.slow  # the search (about 3 s) and 20,000 games of the check
def test_the_toy_curve_decreases_to_epsilon_and_nothing_beats_the_mixture(toy_eq):
    """From bold, cautious and never (boost a card of at most 6, 2, never):
    the curve (each step's gain of the response found, fresh deals) ends with
    a 95% upper bound ≤ ε, its last mean is below its first, and every
    response added was shown to beat its mixture (lo > 0). Measured (seed 1):
    +2.6 [+1.5, +3.7] points (eq1, boost ≤ 7.8, answers bold), +1.3 [+0.4,
    +2.2] (eq2, ≤ 8.7), −0.3 [−1.1, +0.6] (+0.35 with two searches per
    iteration): an equilibrium at eq2.

    The oracle may miss a response, so the final mixture is checked against
    every behaviour the kernel can play: cards are integers 1..9, so the
    thresholds 0..9 are all of them (9 and above boost every card). Each
    scores against the mixture on 2,000 fresh games; none gains more than ε
    (measured: the largest, threshold 9, +0.45 points; threshold 8, which
    eq2 plays, 0 exactly: the mirror)."""
    eq, _, _ = toy_eq
    curve = [s.gain for s in eq.loop.steps]
    print([(s.response, round(100 * s.gain["mean"], 2), s.decision) for s in eq.loop.steps])
    print([m.spec["boost_below"] for m in eq.members])
    assert eq.loop.status == "equilibrium" and len(curve) >= 2
    assert curve[-1]["hi"] <= EPS
    assert curve[-1]["mean"] < curve[0]["mean"]
    assert all(s.gain["lo"] > 0 for s in eq.loop.steps if s.decision == "add")
    # the claim is the audit's: an independent search with four times the evaluations
    audit = eq.loop.steps[-1].audit
    assert audit is not None and audit["decision"] == "equilibrium"
    assert eq.exploitability == audit["gain"] and audit["gain"]["hi"] <= EPS
    assert audit["detail"]["evaluations"] >= 4 * eq.loop.steps[-1].detail["evaluations"] / 2

    gains = every_threshold(eq)
    print({t: round(100 * g, 2) for t, g in gains.items()})
    assert max(gains.values()) <= EPS


def every_threshold(eq: E.Equilibrium, games: int = 2000) -> dict[int, float]:
    """Each toy behaviour's gain over ½ against the final mixture (boost every
    card up to t, t = 0..9), on fresh deals."""
    idx, w = E._weights(eq.mixture)
    support = [eq.members[i] for i in idx]
    seed = E.derive_seed(99, "exhaustive")
    gains = {}
    for t in range(10):
        side = replace(named("never")[0], name=f"threshold{t}", spec={"boost_below": float(t)})
        runs = runner.run_many(
            [runner.RunSpec(base_rules(), side, o, games, seed) for o in support], progress=False
        )
        gains[t] = tune.mixture_score(runs, w)["score"] - 0.5
    return gains


@pytest.mark.slow  # a search and 20,000 games, about 4 s
def test_at_the_default_step_the_toy_mixture_is_not_beaten(toy, tmp_path):
    """From never and cautious with the default step. Before the restarts got
    a wide first step (``WIDE_STEP``), measured: the search added eq1 (boost
    ≤ 3.03, +5.1 points) and eq2 (≤ 4.29, +4.75), then declared eq2 an
    equilibrium with a gain of exactly 0 (the search stood on eq2's plateau,
    where half a card changes no decision), although boosting up to 6 beat
    it by +5.2 points. Now the restart crosses the plateaus: every threshold
    against the declared equilibrium, 2,000 games each, gains at most ε
    (measured: at most +0.9 points)."""
    settings = {**TOY_SETTINGS, "step": E.STEP}
    eq = E.equilibrium(
        "toy", base_rules(), named("never", "cautious"), results=tmp_path, **settings
    )
    assert eq.loop.status == "equilibrium"
    gains = every_threshold(eq)
    print(eq.exploitability, {t: round(100 * g, 2) for t, g in gains.items()})
    assert max(gains.values()) <= EPS


@pytest.mark.slow  # three searches, about 9 s
def test_same_seed_same_population_and_an_interrupted_run_resumes(toy_eq, tmp_path):
    """Two runs with the same seed into fresh stores agree bit for bit (names,
    specs, mixtures, gains). A run stopped by an exception after its second
    step (of two: the second audited), then run again on the same store, gives the same population; the
    two together simulate exactly the runs of one uninterrupted run (the
    second reads back what the first stored and simulates only the rest)."""
    eq, _, full = toy_eq
    again = E.equilibrium("toy", base_rules(), named(), results=tmp_path / "b", **TOY_SETTINGS)
    same(eq, again)

    def stop(step):
        if step.iteration == 1:
            raise KeyboardInterrupt

    store = tmp_path / "c"
    with runner.tally() as first, pytest.raises(KeyboardInterrupt):
        E.equilibrium("toy", base_rules(), named(), results=store, on_step=stop, **TOY_SETTINGS)
    with runner.tally() as second:
        resumed = E.equilibrium("toy", base_rules(), named(), results=store, **TOY_SETTINGS)
    same(eq, resumed)
    assert len(eq.loop.steps) == 2
    assert first.simulated_runs > 0 and second.simulated_runs > 0 and second.read_runs > 0
    assert first.simulated_runs + second.simulated_runs == full.simulated_runs
    assert first.simulated_games + second.simulated_games == full.simulated_games


@pytest.mark.slow  # two searches, about 5 s
def test_a_run_killed_inside_a_search_resumes(toy_eq, tmp_path, monkeypatch):
    """The 6th call to run_many raises (a kill inside the first iteration's
    best response: its search's runs stored, its gain not yet measured): the
    run on the same store then gives the same population, and nothing is
    simulated twice."""
    eq, _, full = toy_eq
    real, calls = runner.run_many, []

    def dying(*a, **kw):
        calls.append(1)
        if len(calls) == 6:
            raise KeyboardInterrupt
        return real(*a, **kw)

    store = tmp_path / "d"
    monkeypatch.setattr(runner, "run_many", dying)
    ended = []
    with runner.tally() as first, pytest.raises(KeyboardInterrupt):
        E.equilibrium(
            "toy", base_rules(), named(), results=store, on_step=ended.append, **TOY_SETTINGS
        )
    assert ended == []  # killed inside the first iteration
    monkeypatch.setattr(runner, "run_many", real)
    with runner.tally() as second:
        resumed = E.equilibrium("toy", base_rules(), named(), results=store, **TOY_SETTINGS)
    same(eq, resumed)
    assert first.simulated_runs > 0 and second.read_runs > 0
    assert first.simulated_runs + second.simulated_runs == full.simulated_runs


def same(a: E.Equilibrium, b: E.Equilibrium) -> None:
    assert [m.name for m in a.members] == [m.name for m in b.members]
    assert [m.spec for m in a.members] == [m.spec for m in b.members]
    assert np.array_equal(a.mixture, b.mixture)
    assert [s.gain for s in a.loop.steps] == [s.gain for s in b.loop.steps]
    assert [s.mixture for s in a.loop.steps] == [s.mixture for s in b.loop.steps]
    assert [s.decision for s in a.loop.steps] == [s.decision for s in b.loop.steps]
    assert [s.audit and s.audit["gain"] for s in a.loop.steps] == [
        s.audit and s.audit["gain"] for s in b.loop.steps
    ]


def test_the_toy_search_refuses_bad_settings_before_any_game(toy, tmp_path):
    with runner.tally() as t:
        for kw, word in (
            ({"games": 401}, "even"),
            ({"budget": 0}, "--budget"),
            ({"iterations": 0}, "--iterations"),
        ):
            with pytest.raises(UserError, match=word):
                E.equilibrium(
                    "toy", base_rules(), named(), results=tmp_path, **{**TOY_SETTINGS, **kw}
                )
        with pytest.raises(UserError, match="twice"):
            E.equilibrium("toy", base_rules(), named("bold", "bold"), results=tmp_path)
    assert t.runs == 0


# ---- a candidate scored against a mixture (tune) -------------------------------------------
@pytest.fixture(scope="module")
def toy_runs(toy):
    """cautious against bold and against never: 200 games each, one seed."""
    a = named("cautious")[0]
    specs = [runner.RunSpec(base_rules(), a, o, 200, 5) for o in named("bold", "never")]
    return runner.run_many(specs, progress=False)


def test_the_mixture_score_is_the_weighted_sum_of_the_single_scores(toy_runs):
    """Σ w_j · score_j: the score against a mixture is linear in the weights
    (every run replays the same deals, so the weighted per-deal points are
    the unit); weights (1, 0) give the first opponent's score and interval."""
    w = (0.3, 0.7)
    single = [tune.mixture_score([r], [1.0]) for r in toy_runs]
    mixed = tune.mixture_score(toy_runs, w)
    assert mixed["score"] == pytest.approx(
        sum(x * s["score"] for x, s in zip(w, single, strict=True))
    )
    for r, s in zip(toy_runs, single, strict=True):
        assert s["score"] == pytest.approx(tune.score_row([r])["score"])
    assert mixed["deals"] == 100 and mixed["games"] == 400
    assert mixed["lo"] < mixed["score"] < mixed["hi"]
    first = tune.mixture_score(toy_runs, (1.0, 0.0))
    for key in ("score", "lo", "hi"):
        assert first[key] == pytest.approx(single[0][key])
    pts = tune.deal_points(toy_runs, w)
    np.testing.assert_allclose(
        pts, (0.3 * toy_runs[0].pair_points + 0.7 * toy_runs[1].pair_points) / 4
    )
    np.testing.assert_allclose(tune.deal_points(toy_runs), tune.deal_points(toy_runs, (0.5, 0.5)))
    assert pts.min() >= 0 and pts.max() <= 1


def test_a_mixture_score_needs_one_seed(toy, toy_runs):
    other = runner.run_many(
        [runner.RunSpec(base_rules(), named("cautious")[0], named("bold")[0], 200, 6)],
        progress=False,
    )
    with pytest.raises(ValueError, match="one seed"):
        tune.mixture_score([toy_runs[0], other[0]], (0.5, 0.5))


def test_tune_refuses_bad_weights_before_any_game(toy, tmp_path):
    base, opponents = named("cautious")[0], named("bold", "never")
    with runner.tally() as t:
        for w in ((0.5, 0.4), (1.0,), (0.5, 0.25, 0.25), (1.5, -0.5)):
            with pytest.raises(ValueError, match="summing to 1"):
                tune.tune("toy", base, opponents, budget=2, games=20, results=tmp_path, weights=w)
    assert t.runs == 0


# ---- the population files -------------------------------------------------------------------
@pytest.fixture(scope="module")
def written(toy_eq, tmp_path_factory):
    eq, _, _ = toy_eq
    summ = E.summary(eq, play_games=200, bootstrap=20)
    folder = tmp_path_factory.mktemp("population")
    path = E.write_population(eq, summ, folder, command="balance toy equilibrium (test)")
    return eq, summ, folder, path


@pytest.mark.slow  # the toy's search (shared with the other toy tests)
def test_a_population_round_trips(written):
    """Every member loads back with the vector it played, the weights are the
    mixture's (summing to 1), and the curve reads back from [[step]]."""
    eq, summ, folder, path = written
    assert path == folder / E.POPULATION
    members, weights, data = E.load_population("toy", folder)
    assert [m.name for m in members] == [m.name for m in eq.members]
    for a, b in zip(members, eq.members, strict=True):
        assert np.array_equal(a.vector(), b.vector())
    assert weights.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(weights, eq.mixture, atol=1e-12)
    assert data["game"] == "toy" and data["seed"] == eq.arena.seed
    curve = E.shipped_curve(data)
    assert len(curve) == len(eq.loop.steps)
    for got, want in zip(curve, summ["curve"], strict=True):
        for key in ("iteration", "size", "support", "response", "decision"):
            assert got[key] == want[key]
        for key in ("mean", "lo", "hi", "n"):
            assert got["gain"][key] == pytest.approx(want["gain"][key])


@pytest.fixture(scope="module")
def crafted(toy, tmp_path_factory):
    """A population written by :func:`write_population` without a game played:
    the loop over bold and cautious with a known matrix, and a response (a
    toy strategy boosting cards up to 8) that joins at the first step."""
    members = named("bold", "cautious")
    eq1 = replace(members[0], name="eq1", spec={"boost_below": 8.0})
    M = np.array([[0.0, 0.05, -0.02], [-0.05, 0.0, -0.03], [0.02, 0.03, 0.0]])
    index = {"bold": 0, "cautious": 1, "eq1": 2}

    def payoffs(ms):
        i = [index[m.name] for m in ms]
        return M[np.ix_(i, i)]

    def respond(ms, p, k):
        mean = 0.02 if k == 1 else -0.001
        return eq1, {"mean": mean, "lo": mean - 0.01, "hi": mean + 0.01, "se": 0.005, "n": 1000}, {}

    loop = E.double_oracle(members, payoffs, respond, epsilon=EPS, iterations=4)
    assert [s.decision for s in loop.steps] == ["add", "equilibrium"]
    arena = E.GameArena("toy", base_rules(), 1)
    eq = E.Equilibrium("toy", base_rules(), loop, arena, EPS, 4, 0.0, members)
    summ = {
        "exploitability": loop.exploitability,
        "status": loop.status,
        "status_text": E.STATUSES[loop.status],
        "settings": {"seed": 1},
        "searched": E.searched_text("toy", base_rules()),
        "curve": [s.as_dict() for s in loop.steps],
    }
    folder = tmp_path_factory.mktemp("crafted")
    path = E.write_population(eq, summ, folder, command="test")
    return eq, summ, folder, path


def test_a_crafted_population_round_trips(crafted):
    """The same round trip without a search: eq1's weight is the mixture's
    (eq1 beats both others: weight 1), and the curve's two steps read back."""
    eq, summ, folder, _ = crafted
    members, weights, data = E.load_population("toy", folder)
    assert [m.name for m in members] == ["bold", "cautious", "eq1"]
    assert members[2].spec["boost_below"] == 8.0
    np.testing.assert_array_equal(weights, [0.0, 0.0, 1.0])
    curve = E.shipped_curve(data)
    assert [c["decision"] for c in curve] == ["add", "equilibrium"]
    assert [c["size"] for c in curve] == [2, 3] and [c["support"] for c in curve] == [1, 1]
    assert curve[0]["gain"] == {"mean": 0.02, "lo": 0.01, "hi": 0.03, "n": 1000}


def test_a_population_written_over_another_leaves_none_of_its_members(crafted, tmp_path):
    """Writing a population into a folder that held a larger one removes the
    earlier member files this one does not name (and nothing else)."""
    eq, summ, folder, _ = crafted
    work = tmp_path / "pop"
    shutil.copytree(folder, work)
    (work / "04-eq2.toml").write_text((work / "03-eq1.toml").read_text())
    (work / "notes.toml").write_text("# mine\n")
    E.write_population(eq, summ, work, command="test")
    assert sorted(p.name for p in work.iterdir()) == [
        "01-bold.toml",
        "02-cautious.toml",
        "03-eq1.toml",
        "notes.toml",
        "population.toml",
    ]


@pytest.mark.parametrize(
    "change, word",
    [
        ("missing", "no equilibrium population"),
        ("wrong game", "not of toy"),
        ("weights", "sum to"),
        ("slash", "file name"),
        ("unknown key", "colour"),
        ("unknown member key", "colour"),
        ("unknown step key", "colour"),
        ("step without its gain", "gain_hi"),
        ("weight range", "weight must be"),
    ],
)
def test_a_malformed_population_is_a_one_line_user_error(crafted, tmp_path, change, word):
    _, _, folder, path = crafted
    text = path.read_text(encoding="utf-8")
    bad = tmp_path / "bad"
    bad.mkdir()
    for f in folder.glob("*.toml"):
        (bad / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    lines = text.splitlines()
    if change == "missing":
        (bad / E.POPULATION).unlink()
    else:
        if change == "wrong game":
            lines = [('game = "tosk"' if x == 'game = "toy"' else x) for x in lines]
        elif change == "weights":
            lines = [("weight = 0.1" if x.startswith("weight = ") else x) for x in lines]
        elif change == "slash":
            lines = [
                (x.replace('file = "', 'file = "../') if x.startswith("file = ") else x)
                for x in lines
            ]
        elif change == "unknown key":
            lines.insert(lines.index('game = "toy"'), 'colour = "red"')
        elif change == "unknown member key":
            lines.insert(lines.index("[[member]]") + 1, 'colour = "red"')
        elif change == "unknown step key":
            lines.insert(lines.index("[[step]]") + 1, 'colour = "red"')
        elif change == "step without its gain":
            lines = [x for x in lines if not x.startswith("gain_hi = ")]
        elif change == "weight range":
            i = next(i for i, x in enumerate(lines) if x.startswith("weight = "))
            lines[i] = "weight = 1.5"
        (bad / E.POPULATION).write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=word) as err:
        E.load_population("toy", bad)
    assert "\n" not in str(err.value)


# ---- what the equilibrium says --------------------------------------------------------------
def test_stability_ranges_contain_the_point_mixture():
    """The biased rock-paper-scissors (mixture 1/3, 1/6, 1/2) measured on 2,000
    sampled deals: each member's bootstrap range of its weight contains the
    point mixture of the sampled matrix, and the support's range holds 3."""
    oracle = MatrixOracle(rps(0.1, 0.2, 0.3), RPS, se=EPS / 4)
    members = [oracle.pure(n) for n in RPS]
    points = sampled_points(oracle, members, deals=2000, seed=7)
    A = np.zeros((3, 3))
    for (a, b), pts in points.items():
        i, j = RPS.index(a), RPS.index(b)
        A[i, j] = pts.mean() / 4 - 0.5
        A[j, i] = -A[i, j]
    p = stats.nash_maxent(A)
    st = E.stability(members, p, points, B=200, seed=1)
    for w, x in zip(st["weights"], p, strict=True):
        assert w["lo"] <= x <= w["hi"]
        assert w["in_support"] > 0.9
    assert st["support"] == {"value": 3, "lo": 3, "hi": 3}
    assert st["effective"]["lo"] <= st["effective"]["value"] <= st["effective"]["hi"] <= 3
    one = E.stability(members[:1], np.ones(1), {}, B=200)
    assert one["support"] == {"value": 1, "lo": 1, "hi": 1}
    assert one["weights"][0]["lo"] == one["weights"][0]["hi"] == 1.0


def test_play_under_a_mixture_of_the_toy(toy, tmp_path):
    """bold and cautious, half and half, 200 games per pairing (3 pairings):
    every share lies in [0, 1] with its interval, n and the deals reported.
    High Card's seats are symmetric (both reveal at once, each deck dealt
    from the same deal): the first seat's share's interval covers ½."""
    pl = E.play(
        base_rules(),
        named("bold", "cautious"),
        np.array([0.5, 0.5]),
        games=200,
        seed=3,
        progress=False,
    )
    assert pl["pairings"] == 3 and pl["games"] == 600 and pl["deals"] == 100
    for key in ("seat_share", "draws", "round_cap"):
        d = pl[key]
        assert 0.0 <= d["lo"] <= d["mean"] <= d["hi"] <= 1.0
        assert d["n"] > 0 and d["clusters"] == 100
    assert pl["seat_share"]["lo"] <= 0.5 <= pl["seat_share"]["hi"]
    assert pl["rounds"]["mean"] >= 5  # the target, 5 points, takes at least 5 rounds
    assert len(pl["keys"]) == 3


def test_the_content_table_of_clash_lists_every_loadout_once():
    """Clash of Steel's loadouts: every legal one is a row, once; the weights
    are the mixture's (summing to 1); parts are items and maneuvers; a loadout
    no member plays is "dead" only when its screen's interval lies below ½."""
    from balance.registry import get_game

    eng = get_game("clash").engine_module()
    rs = config.resolve_variant("clash", "base")
    legal = [eng.loadout_name(i) for i in eng.legal_loadouts(rs.rules)]
    base = config.load_strategy("clash", "aggressive")
    members = [base.with_loadout(0), replace(base.with_loadout(3), name="eq1@" + legal[3])]
    screen = [
        {"content": legal[5], "score": 0.30, "lo": 0.25, "hi": 0.35, "games": 400},
        {"content": legal[6], "score": 0.48, "lo": 0.43, "hi": 0.53, "games": 400},
    ]
    table = E.content_table(rs, members, np.array([0.25, 0.75]), screen)
    assert table["kind"] == "loadout"
    names = [r["content"] for r in table["rows"]]
    assert sorted(names) == sorted(legal) and len(names) == len(set(names))
    assert sum(r["weight"] for r in table["rows"]) == pytest.approx(1.0)
    status = {r["content"]: r["status"] for r in table["rows"]}
    assert status[legal[0]] == status[legal[3]] == "used"
    assert status[legal[5]] == "dead" and status[legal[6]] == "unused"
    assert table["rows"][0]["content"] == legal[3]  # heaviest first
    for r in table["rows"]:
        assert set(r["parts"]) == {"item", "maneuver"}
        assert set(r["parts"]["item"]) <= set(eng.ITEMS)
        assert r["parts"]["maneuver"][0] in eng.MANEUVERS
    assert {p["kind"] for p in table["parts"]} == {"item", "maneuver"}
    maneuvers = [p for p in table["parts"] if p["kind"] == "maneuver"]
    assert sum(p["weight"] for p in maneuvers) == pytest.approx(1.0)


# ---- audits in the population file ------------------------------------------------------------
def _audit(decision="equilibrium", gain=-0.002, lo=-0.004, hi=0.001, seed=1):
    return {
        "seed": seed,
        "tag": "audit:3",
        "evaluations": 10272,
        "restarts": 16,
        "confirm_games": 16000,
        "gain": gain,
        "gain_lo": lo,
        "gain_hi": hi,
        "deals": 8000,
        "decision": decision,
        "response": "eq2",
        "date": "2026-12-07T20:00:00+00:00",
    }


def test_a_recorded_audit_round_trips_and_a_second_one_appends(crafted, tmp_path):
    """An [[audit]] table written by :func:`append_audit` loads back with its
    seed, budget, gain and interval; a second audit (another seed) appends
    after it; a malformed one is a one-line error."""
    _, _, folder, path = crafted
    work = tmp_path / "pop"
    work.mkdir()
    for f in folder.glob("*.toml"):
        (work / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    E.append_audit("toy", work, _audit(seed=1))
    E.append_audit("toy", work, _audit(seed=2, gain=0.001, lo=-0.002, hi=0.004))
    _, _, data = E.load_population("toy", work)
    got = E.shipped_audits(data)
    assert [a["seed"] for a in got] == [1, 2] and got[1]["gain_hi"] == 0.004
    assert got[0]["evaluations"] == 10272 and got[0]["decision"] == "equilibrium"
    text = (work / E.POPULATION).read_text(encoding="utf-8")
    (work / E.POPULATION).write_text(text.replace("gain_lo = ", "gain_low = "), encoding="utf-8")
    with pytest.raises(UserError, match="gain_low") as err:
        E.load_population("toy", work)
    assert "\n" not in str(err.value)


def test_the_study_claims_an_equilibrium_only_on_a_recorded_audit():
    """The study's re-check is a smaller search: it alone claims nothing. An
    equilibrium is shown when the population's last recorded audit found none
    past ε and the re-check finds none either (the audit's gain is the
    figure); a re-check or a recorded audit past ε is a gap (the larger gain
    the figure); no audit recorded: not shown."""
    check = {
        "status": "equilibrium",
        "failed": False,
        "audit": {"seed": 20261130, "evaluations": 24, "gain": 0.003},
        "exploitability": {"mean": 0.003, "lo": -0.01, "hi": 0.016, "n": 1000},
    }
    out = E.with_audits(check, [_audit()])
    assert out["status"] == "equilibrium" and out["exploitability"]["mean"] == -0.002
    assert out["check"]["evaluations"] == 24 and out["audit"]["evaluations"] == 10272
    assert E.with_audits(check, [])["status"] == "not shown"
    assert "no audit" in E.with_audits(check, [])["status_text"]
    # a recorded audit that beat ε: a gap, the audit's gain the figure, whatever the re-check says
    beaten = E.with_audits(check, [_audit("add", 0.05, 0.04, 0.06)])
    assert beaten["status"] == "gap" and beaten["exploitability"]["mean"] == 0.05
    assert "recorded audit" in beaten["status_text"]
    gap = {**check, "status": "gap", "exploitability": {"mean": 0.05, "lo": 0.03, "hi": 0.07}}
    out = E.with_audits(gap, [_audit()])
    assert out["status"] == "gap" and out["exploitability"]["mean"] == 0.05
    # both beat ε: the larger gain is the figure
    assert E.with_audits(gap, [_audit("add", 0.08, 0.07, 0.09)])["exploitability"]["mean"] == 0.08
    assert E.with_audits(gap, [_audit("add", 0.02, 0.01, 0.03)])["exploitability"]["mean"] == 0.05
    failed = {**check, "status": "not shown", "failed": True}
    assert E.with_audits(failed, [_audit()])["status"] == "not shown"


def test_a_population_file_records_no_machine_path():
    """The command a population file records leaves out the store and shows a
    path under the working folder relative to it, any other by its name; a
    line break cannot end the comment line."""
    import os

    cwd = os.getcwd()
    cmd = (
        f"balance trisk equilibrium --results /work/eq-results --out {cwd}/strategies/trisk/eq "
        "--from /home/someone/x.toml --seed 3"
    )
    got = E.portable_command(cmd)
    assert got == ("balance trisk equilibrium --out strategies/trisk/eq --from x.toml --seed 3")
    assert "\n" not in E.portable_command("balance x --out 'a\nb = 1'")
