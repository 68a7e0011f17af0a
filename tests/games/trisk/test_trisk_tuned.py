"""Tuned per deck (issue 18, part 4): a strategy file with weights per Primal
(``[by_primal."<Primal>"]``), ``tune --per-deck``, opponents on every reference
deck (``name@*``), the shipped ``tuned`` strategy, and ``trisk power
--strategy tuned``."""

from __future__ import annotations

import json

import pytest

from balance import config
from balance.errors import UserError
from balance.registry import get_game
from tests.cli.test_tune_cli import cli

PRIMALS = config.reference_deck_names("trisk")  # the reference decks (one per Primal)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_side_plays_the_weights_of_its_decks_primal(tmp_path):
    f = _write(
        tmp_path / "pp.toml",
        'name = "pp"\n[play]\ncreate = 1.0\n'
        '[by_primal."Meru the Still Water".play]\ncreate = 5.0\n',
    )
    st = config.load_strategy("trisk", f)  # the first reference deck: the top level
    assert st.name == f"pp@{PRIMALS[0]}" and st.spec == {"play": {"create": 1.0}}
    meru = config.load_strategy("trisk", f + "@Meru")
    assert meru.spec == {"play": {"create": 5.0}}
    # a swap-in deck of the power test keeps its Primal, so its weights follow
    g = get_game("trisk")
    cs = g.card_set("reference")
    deck = g.card_set_module().load_decks(cs)["Meru the Still Water"]
    swapped = deck.swap_in(cs.names.index("Bear") if "Bear" in cs.names else 1, 1)
    assert config.deck_primal_name(swapped) == "Meru the Still Water"
    assert st.with_deck(swapped, cs.n_cards).spec == {"play": {"create": 5.0}}
    # and back to a deck whose Primal has no table: the top level again
    assert meru.with_deck(g.card_set_module().load_decks(cs)[PRIMALS[0]], cs.n_cards).spec == {
        "play": {"create": 1.0}
    }
    # the weights are in the run key: two decks' sides never share a run
    from balance.runner import side_record

    assert side_record(meru)["spec"] != side_record(st)["spec"]


@pytest.mark.parametrize(
    "body, words",
    [
        ('[by_primal."Nobody".play]\ncreate = 1.0\n', "names no Primal of the reference set"),
        ('[by_primal."Meru the Still Water"]\ndeck = "x"\n', "holds weights only, not 'deck'"),
        ('[by_primal."Meru the Still Water".play]\nnope = 1.0\n', "nope"),
        ("by_primal = 3\n", "'by_primal' must hold tables"),
    ],
)
def test_a_bad_per_primal_table_is_one_line(tmp_path, body, words):
    f = _write(tmp_path / "bad.toml", 'name = "bad"\n' + body)
    with pytest.raises(UserError) as e:
        config.load_strategy("trisk", f)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_the_shipped_tuned_strategy_has_a_table_for_every_reference_deck():
    """``strategies/trisk/tuned.toml``: tempo tuned once per reference deck by
    ``balance trisk tune --per-deck all`` (its provenance says so), one table per
    Primal, each deck's side playing its own."""
    path = get_game("trisk").strategy_files / "tuned.toml"
    text = path.read_text(encoding="utf-8")
    provs = [
        json.loads(line.split(":", 1)[1])
        for line in text.splitlines()
        if line.startswith("# provenance:")
    ]
    bases = {p["base"] for p in provs}
    assert bases >= {f"tempo@{d}" for d in PRIMALS}
    assert all("--per-deck all" in p["command"] for p in provs)
    specs = {d: config.load_strategy("trisk", f"tuned@{d}").spec for d in PRIMALS}
    assert len({json.dumps(s, sort_keys=True) for s in specs.values()}) == len(PRIMALS)


@pytest.mark.slow
def test_vs_every_reference_deck_and_per_deck_tuning(tmp_path):
    p = cli(
        [
            "trisk",
            "tune",
            "--strategy",
            "tempo",
            "--vs",
            "rush,tempo@*",
            "--per-deck",
            "Vask,Meru",
            "--budget",
            2,
            "--games",
            20,
            "--top",
            1,
            "--refine",
            1,
            "--out",
            "pd.toml",
            "--json",
        ],
        tmp_path,
    )
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert [r["base"] for r in rows] == ["tempo@Vask the Ember King", "tempo@Meru the Still Water"]
    assert all(len(r["opponents"]) == 1 + len(PRIMALS) for r in rows)
    assert {f"tempo@{d}" for d in PRIMALS} <= set(rows[0]["opponents"])
    out = tmp_path / "pd.toml"
    for r in rows:  # each deck's side plays exactly the weights that were scored
        deck = r["base"].partition("@")[2]
        assert config.load_strategy("trisk", f"{out}@{deck}").spec == r["tuned_spec"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, words",
    [
        (["tosk", "tune", "--per-deck", "all"], "--per-deck needs a game with decks"),
        (["tosk", "tune", "--vs", "balanced@*"], "needs a game with decks"),
        (["trisk", "tune", "--per-deck", "Nobody"], "unknown trisk deck"),
        (["trisk", "power", "--strategy", "tempo,tempo"], "--strategy: name each strategy once"),
        (["trisk", "power", "--field", "nobody"], "nobody"),
    ],
)
def test_per_deck_mistakes_are_one_line(tmp_path, args, words):
    p = cli([*args, "--budget", 1, "--games", 2] if "tune" in args else args, tmp_path)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert words in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "tuned").exists()


@pytest.mark.slow
def test_power_with_the_tuned_strategy_plays_each_decks_weights(tmp_path):
    """``trisk power --strategy tuned``: the card's deck is played by the tuned
    strategy, each Primal's deck with its own table (read back from the runs)."""
    p = cli(
        [
            "trisk",
            "power",
            "--strategy",
            "tuned",
            "--cards",
            "Bear",
            "--scale",
            0.05,
            "--no-regression",
            "--check-strategy",
            "none",
            "--out",
            "p.html",
        ],
        tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "p.html").is_file()
    sides = [config.load_strategy("trisk", f"tuned@{d}") for d in PRIMALS]
    want = {config.deck_primal_name(s.deck): s.spec for s in sides}
    seen = {}
    for m in (tmp_path / "results" / "trisk").glob("*/manifest.json"):
        conf = json.loads(m.read_text()).get("resolved_config")  # (not the finishes check)
        a = conf["a"] if conf else {"name": ""}
        if a["name"].startswith("tuned@"):
            seen.setdefault(a["deck"]["primal_name"], []).append(a["spec"])
    assert seen, "the tuned side played"
    for primal, specs in seen.items():
        assert all(spec == want[primal] for spec in specs)


def test_card_checks_compare_the_two_verdicts():
    import pandas as pd

    from balance import robust
    from balance.games.trisk import study

    def card(name, eff, verdict, direction, eff2, verdict2, depends):
        return dict(
            card=name,
            effect=eff,
            lo=eff - 0.01,
            hi=eff + 0.01,
            verdict=verdict,
            direction=direction,
            games=1000,
            effect2=eff2,
            lo2=eff2 - 0.01,
            hi2=eff2 + 0.01,
            verdict2=verdict2,
            games2=1000,
            depends_on_strategy=depends,
        )

    cards = pd.DataFrame(
        [
            card("A", 0.04, "not equal", "stronger", 0.05, "not equal", False),
            card("B", -0.03, "not equal", "weaker", 0.0, "equal", True),
            card("C", 0.001, "equal", "", 0.02, "inconclusive", False),
            card("D", 0.0, "equal", "", 0.0, "equal within margin", False),
            # not shown inside or outside under either: the same words, nothing shown
            card("E", 0.0, "not shown equal", "stronger", 0.0, "not shown equal", False),
        ]
    )
    rows = {r["check"]: r for r in study.card_checks(cards, "tempo", "tuned", k=3)}
    assert list(rows) == ["card: A", "card: B", "card: C"]  # the largest effects first
    # a card whose verdict depends on the strategy is always re-checked
    assert [r["check"] for r in study.card_checks(cards, "tempo", "tuned", k=1)] == [
        "card: A",
        "card: B",
    ]
    assert rows["card: A"]["status"] == robust.HOLDS
    assert rows["card: B"]["status"] == robust.DEPENDS
    assert rows["card: C"]["status"] == robust.UNCLEAR
    d = study.card_checks(cards, "tempo", "tuned", k=4)[-1]
    assert d["status"] == robust.HOLDS  # equal and equal within the margin: both shown equal
    e = study.card_checks(cards, "tempo", "tuned", k=5)[-1]
    assert e["check"] == "card: E" and e["status"] == robust.UNCLEAR
    assert "not shown equal (stronger)" in e["named"]
    assert "under tuned" in d["tuned"] and "n=1,000" in d["named"]
