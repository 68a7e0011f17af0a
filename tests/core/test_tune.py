"""The tuner (``balance.tune``): the CMA-ES wrapper on a toy objective with a
known optimum (bounds, determinism, budget prefixes), the bounds file (fixed
keys, widened bounds, refusals), and on Tosk: a weight with a known best
value found, resume after an interruption, the written strategy file."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from balance import config, tune
from balance.errors import UserError
from tests import ROOT

OPTIMUM = {"a.x": 3.0, "a.y": -2.0, "a.z": 15.0, "t": 0.5}  # z lies beyond its bound (10)


def toy_space() -> tune.Space:
    return tune.Space(
        (
            tune.Param("a.x", -10.0, 10.0, 0.0),
            tune.Param("a.y", -10.0, 10.0, 0.0),
            tune.Param("a.z", -10.0, 10.0, 0.0),
            tune.Param("t", 0.0, 2.0, 1.0),
        ),
        {"a": {"keep": 1.0}},
    )


def toy_score(spec: dict, noise: float = 0.05) -> float:
    """A noisy quadratic, best at OPTIMUM; the noise is a function of the
    weights (common random numbers: the same candidate scores the same)."""
    v = {"a.x": spec["a"]["x"], "a.y": spec["a"]["y"], "a.z": spec["a"]["z"], "t": spec["t"]}
    f = -sum((v[k] - OPTIMUM[k]) ** 2 / (4.0 if k == "t" else 100.0) for k in v)
    h = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).digest()
    return f + noise * np.random.default_rng(int.from_bytes(h[:8], "little")).standard_normal()


def toy_evaluate(specs):
    assert all(s["a"]["keep"] == 1.0 for s in specs)  # an untuned key is carried through
    return [toy_score(s) for s in specs]


def test_search_recovers_the_optimum_of_a_noisy_quadratic():
    hist = tune.search(toy_space(), toy_evaluate, 300, seed=4, sigma0=0.2)  # a far optimum
    assert len(hist) == 300
    assert hist[0].values.tolist() == [0.0, 0.0, 0.0, 1.0]  # the base comes first
    best = tune.best_distinct(hist, 1)[0]
    x, y, z, t = best.values
    assert abs(x - 3.0) < 1.0 and abs(y + 2.0) < 1.0
    assert z == pytest.approx(10.0, abs=0.5)  # pressed against its bound, never beyond
    assert abs(t - 0.5) < 0.3
    lo, hi = toy_space().lows(), toy_space().highs()
    for ev in hist:  # every candidate within its bounds, rounded to the decimals played
        assert np.all(ev.values >= lo) and np.all(ev.values <= hi)
        assert np.array_equal(ev.values, np.round(ev.values, tune.DECIMALS))
    assert best.score > hist[0].score + 0.5


def test_search_is_determined_by_its_seed_and_a_smaller_budget_is_a_prefix():
    a = tune.search(toy_space(), toy_evaluate, 60, seed=7)
    b = tune.search(toy_space(), toy_evaluate, 60, seed=7)
    assert [e.values.tolist() for e in a] == [e.values.tolist() for e in b]
    c = tune.search(toy_space(), toy_evaluate, 60, seed=8)
    assert [e.values.tolist() for e in a[1:]] != [e.values.tolist() for e in c[1:]]
    short = tune.search(toy_space(), toy_evaluate, 23, seed=7)  # stopped mid-generation
    assert [e.values.tolist() for e in short] == [e.values.tolist() for e in a[:23]]
    # numpy's global generator is left as it was
    np.random.seed(5)
    before = np.random.random()
    np.random.seed(5)
    tune.search(toy_space(), toy_evaluate, 10, seed=7)
    assert np.random.random() == before


def test_search_resumes_after_an_interruption():
    seen: dict = {}

    def flaky(limit):
        def evaluate(specs):
            out = []
            for s in specs:
                key = json.dumps(s, sort_keys=True)
                if key not in seen:
                    if len(seen) >= limit:
                        raise KeyboardInterrupt
                    seen[key] = toy_score(s)
                out.append(seen[key])
            return out

        return evaluate

    with pytest.raises(KeyboardInterrupt):
        tune.search(toy_space(), flaky(17), 50, seed=2)
    assert len(seen) == 17
    again = tune.search(toy_space(), flaky(10**6), 50, seed=2)
    whole = tune.search(toy_space(), toy_evaluate, 50, seed=2)
    assert [(e.values.tolist(), e.score) for e in again] == [
        (e.values.tolist(), e.score) for e in whole
    ]


def _bounds(tmp_path, text: str):
    p = tmp_path / "tune.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_space_bounds_fixed_keys_and_defaults(tmp_path):
    base = config.load_strategy("tosk", "balanced")
    sp = tune.space("tosk", base)
    keys = [p.key for p in sp.params]
    assert "play.lethal" in keys and "temperature" in keys and "prior_atk" in keys
    # balanced leaves prior_weight out: the kernel's 1e9 ("never adapt") is far outside
    # its declared range, so it is held
    assert "prior_weight" in sp.fixed
    lethal = next(p for p in sp.params if p.key == "play.lethal")
    assert (lethal.lo, lethal.hi, lethal.start) == (-10.0, 10.0, 5.0)
    empty = next(p for p in sp.params if p.key == "play.empty")
    assert empty.start == 0.0  # absent from the base: starts at 0
    prior = next(p for p in sp.params if p.key == "prior_atk")
    assert prior.start == 3.0  # absent scalar: the kernel's default
    assert sp.spec(sp.start()) == {
        **base.spec,
        **{s: {**base.spec.get(s, {}), **sp.spec(sp.start())[s]} for s in ("play", "heal", "keep")},
        "temperature": 0.0,
        "heal_temperature": 0.0,
        "prior_atk": 3.0,
        "prior_def": 2.0,
    }
    b = _bounds(
        tmp_path,
        'weights = [-2.0, 2.0]\nfixed = ["heal", "keep.cost", "temperature"]\n'
        "[bounds]\nprior_atk = [1.0, 4.0]\n[bounds.play]\nlethal = [0.0, 30.0]\n",
    )
    sp = tune.space("tosk", base, b)
    keys = [p.key for p in sp.params]
    assert not any(k.startswith("heal.") for k in keys)
    assert "keep.cost" not in keys and "temperature" not in keys
    assert {"heal.gain", "keep.cost", "temperature"} <= set(sp.fixed)
    lethal = next(p for p in sp.params if p.key == "play.lethal")
    assert (lethal.lo, lethal.hi) == (0.0, 30.0)
    atk = next(p for p in sp.params if p.key == "play.atk")
    assert (atk.lo, atk.hi) == (-2.0, 2.0)
    assert "play.lethal" not in sp.widened and "play.dmg_est" not in sp.widened
    spec = sp.spec(sp.highs())
    assert spec["heal"] == base.spec["heal"] and spec["keep"]["cost"] == base.spec["keep"]["cost"]
    # a base value a little outside its bound widens it
    sp = tune.space("tosk", base, _bounds(tmp_path, "weights = [-1.0, 0.5]\n"))
    atk = next(p for p in sp.params if p.key == "play.atk")
    assert (atk.lo, atk.hi, atk.start) == (-1.0, 1.0, 1.0) and "play.atk" in sp.widened


@pytest.mark.parametrize(
    "text, words",
    [
        ("nope = 1\n", "unknown key 'nope'"),
        ('fixed = ["play.nope"]\n', "'play.nope', not a key"),
        ("[bounds]\ntemperature = [2.0, 1.0]\n", "low < high"),
        ("[bounds]\ntemperature = [-1.0, 1.0]\n", "temperature"),
        ("[bounds.play]\nnope = [0.0, 1.0]\n", "unknown key 'nope'"),
        ('fixed = ["play", "heal", "keep", "temperature", "heal_temperature"]\n', "nothing"),
        ("weights = [1, 2, 3]\n", "[low, high]"),
    ],
)
def test_space_refuses_a_bad_bounds_file(tmp_path, text, words):
    base = config.load_strategy("tosk", "random")
    with pytest.raises(UserError, match="tune.toml") as e:
        tune.space("tosk", base, _bounds(tmp_path, text))
    assert words in str(e.value)


def test_every_game_ships_bounds_every_strategy_accepts():
    from balance.registry import GAMES

    for game in GAMES:
        if game not in ("tosk", "trisk", "clash", "suits"):
            continue  # a game registered by another test
        assert (ROOT / "configs" / game / "tune.toml").is_file()
        for name in config.strategy_names(game):
            sp = tune.space(game, config.load_strategy(game, name))
            assert sp.dim > 0 and sp.source.endswith("tune.toml")


# ---- on the game --------------------------------------------------------------------
LETHAL_ONLY = """\
weights = [-10.0, 10.0]
fixed = ["heal", "keep", "temperature", "heal_temperature", "prior_atk", "prior_def",
         "play.atk", "play.def", "play.cost", "play.unspent", "play.cards", "play.draw",
         "play.dmg_est", "play.block_est", "play.hurt_def", "play.press_atk", "play.wasted",
         "play.empty", "play.exposed"]
"""

# A defender that turns down the lethal play: the only weight tuned is `lethal`.
SHY = """\
name = "shy"
description = "defends, and turns down a play that would kill"
[play]
def = 1.0
atk = 0.5
draw = 0.5
lethal = -8.0
[heal]
gain = 1.0
"""


@pytest.mark.slow
def test_tosk_tuning_finds_that_a_lethal_play_is_worth_taking(tmp_path):
    """Rulebook (tosk.txt, line 55): "The game ends when a player has reduced
    their opponent's hit points to zero and wins the battle." A play whose
    expected damage reaches the opponent's HP ends the game in the player's
    favour, so with every other weight held, the best `lethal` weight is
    positive; the tuner starts from -8 and must find that."""
    (tmp_path / "shy.toml").write_text(SHY, encoding="utf-8")
    base = config.load_strategy("tosk", str(tmp_path / "shy.toml"))
    bounds = _bounds(tmp_path, LETHAL_ONLY)
    opp = [config.load_strategy("tosk", "aggressor")]
    r = tune.tune(
        "tosk",
        base,
        opp,
        budget=16,
        games=400,
        seed=11,
        results=tmp_path / "results",
        bounds=bounds,
        sigma0=0.25,  # the optimum is far from the start: a broad first step
        progress=False,
    )
    assert [p.key for p in r.space.params] == ["play.lethal"]
    assert r.tuned.spec["play"]["lethal"] > 0
    assert r.diff["lo"] > 0  # and it plays better for it, on fresh deals
    assert r.tuned_score["score"] > r.base_score["score"]
    for k in ("def", "atk", "draw"):
        assert r.tuned.spec["play"][k] == base.spec["play"][k]


def _tosk_tune(results, **kw):
    base = config.load_strategy("tosk", "balanced")
    opp = [config.load_strategy("tosk", "aggressor"), config.load_strategy("tosk", "turtle")]
    args = dict(budget=20, games=200, seed=5, results=results, progress=False)
    return tune.tune("tosk", base, opp, **{**args, **kw})


def _same(a, b):
    assert [e.values.tolist() for e in a.history] == [e.values.tolist() for e in b.history]
    assert [e.score for e in a.history] == [e.score for e in b.history]
    assert a.tuned.spec == b.tuned.spec
    assert a.tuned_score == b.tuned_score and a.base_score == b.base_score
    assert a.diff == b.diff


@pytest.mark.slow
def test_tune_resumes_through_the_store(tmp_path, monkeypatch):
    whole = _tosk_tune(tmp_path / "a")
    assert whole.evaluated == 20
    # interrupted in the 8th evaluation (its second run raises): every finished run is stored
    real = tune.runner.save_run
    calls = {"n": 0}

    def interrupted(*args, **kw):  # the 16th run is stopped before it is stored
        calls["n"] += 1
        if calls["n"] > 15:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(tune.runner, "save_run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _tosk_tune(tmp_path / "b")
    monkeypatch.setattr(tune.runner, "save_run", real)
    again = _tosk_tune(tmp_path / "b")
    assert again.evaluated == 20 - 7  # the first 7 were read back (and half the 8th)
    _same(whole, again)
    # a cut budget is a prefix: a larger budget continues it
    short = _tosk_tune(tmp_path / "c", budget=9)
    assert [e.values.tolist() for e in short.history] == [
        e.values.tolist() for e in whole.history[:9]
    ]
    longer = _tosk_tune(tmp_path / "c")
    assert longer.evaluated == 20 - 9
    _same(whole, longer)


@pytest.mark.slow
def test_written_strategy_loads_and_carries_its_provenance(tmp_path):
    r = _tosk_tune(tmp_path / "results", budget=6)
    path = tune.write_strategy(r, tmp_path / "out" / "mine.toml", command="balance tosk tune x")
    st = config.load_strategy("tosk", str(path))
    assert st.name == "balanced-tuned" and st.spec == r.tuned.spec
    text = path.read_text(encoding="utf-8")
    prov = json.loads(text.split("# provenance: ", 1)[1].splitlines()[0])
    assert prov["command"] == "balance tosk tune x"
    assert prov["opponents"] == ["aggressor", "turtle"]
    assert prov["budget"] == 6 and prov["games"] == 200 and prov["seed"] == 5
    assert prov["base"] == "balanced"
    assert prov["score"]["score"] == r.tuned_score["score"]
    assert prov["score"]["lo"] < prov["score"]["score"] < prov["score"]["hi"]
    assert prov["score"]["games"] == 2 * 800
    assert "toolkit_version" in prov and "date" in prov
    # the file plays as it was scored: its score on the fresh deals is the one reported
    from balance import runner

    assert np.array_equal(st.vector(), r.tuned.vector())
    specs = [runner.RunSpec(r.ruleset, st, o, r.fresh_games, r.fresh_seed) for o in r.opponents]
    got = runner.run_many(specs, progress=False)
    assert tune.score_row(got) == {k: r.tuned_score[k] for k in tune.score_row(got)}


@pytest.mark.parametrize(
    "game, base, opp", [("trisk", "tempo", "rush"), ("clash", "miser", "counter")]
)
def test_tuned_side_keeps_the_base_deck_or_loadout(tmp_path, game, base, opp):
    b = config.load_strategy(game, base)
    r = tune.tune(
        game,
        b,
        [config.load_strategy(game, opp)],
        budget=2,
        games=20,
        seed=3,
        results=tmp_path / "results",
        top=1,
        refine=1,
        progress=False,
    )
    assert r.tuned.name.partition("@")[2] == b.name.partition("@")[2] != ""
    path = tune.write_strategy(r, tmp_path / "t.toml")
    back = config.load_strategy(game, str(path))
    assert back.name == r.tuned.name and back.spec == r.tuned.spec
    assert (back.deck is None) == (b.deck is None) and back.loadout == b.loadout
    if b.deck is not None:
        assert back.deck.name == b.deck.name


@pytest.mark.slow
def test_the_toy_game_is_tuned_with_nothing_but_a_bounds_file(tmp_path):
    """The core names no game: a fifth game registered from a test is tuned
    through the same code (its one scalar has no range until a bounds file
    gives it one: the toy's own configs/tune.toml, for the equilibrium
    search, is replaced here by an empty one)."""
    from balance.registry import register, unregister
    from tests.core.test_toy_game import TOY

    register(TOY)
    try:
        base = config.load_strategy("toy", "never")
        with pytest.raises(UserError, match="nothing is left to tune"):
            tune.space("toy", base, _bounds(tmp_path, "# no ranges\n"))
        bounds = _bounds(tmp_path, "[bounds]\nboost_below = [0.0, 13.0]\n")
        r = tune.tune(
            "toy",
            base,
            [config.load_strategy("toy", "bold")],
            budget=8,
            games=40,
            seed=2,
            results=tmp_path / "results",
            bounds=bounds,
            sigma0=0.3,
            top=2,
            refine=1,
            progress=False,
        )
        assert [p.key for p in r.space.params] == ["boost_below"]
        assert 0.0 <= r.tuned.spec["boost_below"] <= 13.0
        path = tune.write_strategy(r, tmp_path / "toy.toml")
        assert config.load_strategy("toy", str(path)).spec == r.tuned.spec
    finally:
        unregister(TOY.name)
