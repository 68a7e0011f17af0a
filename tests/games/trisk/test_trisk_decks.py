"""Trisk decks under a designer's card set: a side names its deck (``strategy@deck``,
cards by name) before the rules are known, and where side and rules meet (a run,
a trace) the deck is looked up by card NAME in the ruleset's card set and checked
there ("Every card must be playable by your Primal"). A set with exchanged,
removed or added cards then plays exactly the deck's named cards, or the side is
refused in one line naming the deck and the card, before anything is written.

The designer's sets here are the reference set (configs/trisk/cards.toml) edited
as text: its ``[[card]]`` blocks come last, so they can be reordered, dropped,
added or changed one by one.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from balance import config, runner
from balance.errors import UserError
from balance.games.trisk.cards import REFERENCE_SET, load_card_set

VASK = "Vask the Ember King"  # MIG 9, CUN 0, WIS 0: plays Bear (MIG 3), never Fox (CUN 3)
MERU = "Meru the Still Water"
A, B = f"tempo@{VASK}", f"rush@{MERU}"
N = 200

REF_TEXT = REFERENCE_SET.read_text(encoding="utf-8")
HEAD, *BLOCKS = re.split(r"(?m)^(?=\[\[card\]\]$)", REF_TEXT)


def _name(block: str) -> str:
    return re.search(r'(?m)^name = "(.*)"$', block).group(1)


NAMES = [_name(b) for b in BLOCKS]


def _write(path: Path, blocks: list[str], head: str = HEAD) -> Path:
    path.write_text(head + "".join(b.rstrip("\n") + "\n\n" for b in blocks), encoding="utf-8")
    return path


def exchanged(path: Path, x: str, y: str) -> Path:
    """The reference set with cards ``x`` and ``y`` in each other's place."""
    bl = list(BLOCKS)
    i, j = NAMES.index(x), NAMES.index(y)
    bl[i], bl[j] = bl[j], bl[i]
    return _write(path, bl)


def removed(path: Path, x: str) -> Path:
    return _write(path, [b for b in BLOCKS if _name(b) != x])


def moved_last(path: Path, x: str) -> Path:
    return _write(path, [b for b in BLOCKS if _name(b) != x] + [BLOCKS[NAMES.index(x)]])


def added_first(path: Path) -> Path:
    """A new creation (a copy of Stag under a new name and id) before every card:
    every row of the set moves down by one."""
    stag = BLOCKS[NAMES.index("Stag")]
    new = stag.replace('name = "Stag"', 'name = "Marsh Newt"').replace(
        re.search(r"(?m)^id = \d+$", stag).group(0), "id = 900"
    )
    return _write(path, [new, *BLOCKS])


def changed(path: Path, x: str, old: str, new: str) -> Path:
    bl = list(BLOCKS)
    i = NAMES.index(x)
    assert old in bl[i]
    bl[i] = bl[i].replace(old, new, 1)
    return _write(path, bl)


def _rules(path: Path | None) -> config.Ruleset:
    base = config.resolve_variant("trisk", "base")
    if path is None:
        return base
    return replace(base, name="designer", rules={**base.rules, "card_set": str(path)})


def _sides():
    return config.load_strategy("trisk", A), config.load_strategy("trisk", B)


def _run(path: Path | None):
    a, b = _sides()
    return runner.simulate_run(runner.RunSpec(_rules(path), a, b, N, 1))


def _trace_texts(path: Path | None, game: int) -> list[str]:
    from balance.cli.game import trace_game as _trace

    a, b = _sides()
    return [e["text"] for e in _trace("trisk", _rules(path), a, b, 1, game)]


def _deck_names(name: str) -> list[str]:
    """The names of a side's deck cards, in deck order (read in the reference set)."""
    ref = load_card_set("reference")
    return [ref.names[r] for r in config.load_strategy("trisk", name).deck.cards]


@pytest.fixture(scope="module")
def reference():
    return _run(None)


# --------------------------------------------------------------------------- by name
@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda p: exchanged(p, "Bear", "Fox"), id="Bear-Fox-exchanged"),
        pytest.param(lambda p: exchanged(p, "Clay Golem", "Raven"), id="neutral-exchanged"),
        pytest.param(lambda p: exchanged(p, VASK, "Cern the Grey"), id="Primals-exchanged"),
        pytest.param(lambda p: moved_last(p, VASK), id="Primal-moved-last"),
        pytest.param(lambda p: removed(p, "Stag"), id="unused-card-removed"),
        pytest.param(added_first, id="card-added-first"),
    ],
)
def test_a_reordered_set_plays_the_same_named_cards(make, tmp_path, reference):
    """The same cards under other rows: every game is the same game, card for card
    (before: the engine read the reference rows in the designer's set, so Vask
    played Fox, a card it may not play, or the run stopped with a ValueError)."""
    path = make(tmp_path / "designer.toml")
    cs = load_card_set(path)
    assert cs.names != load_card_set("reference").names
    res = _run(path)
    assert (res.a_wins, res.b_wins, res.draws) == (
        reference.a_wins,
        reference.b_wins,
        reference.draws,
    )
    assert (res.pair_points == reference.pair_points).all()
    assert _trace_texts(path, 0) == _trace_texts(None, 0)
    # the run's sides hold the rows of the designer's set for the same names
    spec = res.spec
    assert spec.a.n_cards == cs.n_cards
    assert cs.names[spec.a.deck.primal] == VASK
    assert [cs.names[r] for r in spec.a.deck.cards] == _deck_names(A)


def test_the_cards_a_side_plays_are_its_decks(tmp_path):
    """Through the trace: everything Vask's side musters, creates or casts under a
    set where Bear and Fox are exchanged is a card of its deck (Bear, never Fox)."""
    path = exchanged(tmp_path / "designer.toml", "Bear", "Fox")
    deck = set(_deck_names(A))
    seen: set[str] = set()
    pat = re.compile(
        rf"\({re.escape(A)}\) (?:musters a card \(\d+ in hand\): |creates |casts )"
        r"(.+?)(?: \(level \d+\)| on .*)?$"
    )
    for game in range(6):
        for text in _trace_texts(path, game):
            m = pat.search(text)
            if m:
                seen.add(m.group(1))
    assert seen and seen <= deck, seen - deck
    assert "Bear" in seen and "Fox" not in seen


# --------------------------------------------------------------------------- refused
@pytest.mark.parametrize(
    "make,frags",
    [
        (lambda p: removed(p, "Bear"), ["card 'Bear' is not in the set"]),
        (lambda p: removed(p, VASK), [f"its Primal '{VASK}' is not in the set"]),
        (
            lambda p: changed(p, "Bear", "mig = 3\n", "mig = 3\ncun = 1\n"),
            [f"Primal '{VASK}' cannot play 'Bear' (CUN 1 > 0)"],
        ),
    ],
)
def test_an_illegal_deck_is_refused_in_one_line(make, frags, tmp_path):
    path = make(tmp_path / "designer.toml")
    a, b = _sides()
    for attempt in (
        lambda: runner.RunSpec(_rules(path), a, b, N, 1),
        lambda: _trace_texts(path, 0),
    ):
        with pytest.raises(UserError) as exc:
            attempt()
        msg = str(exc.value)
        assert "\n" not in msg
        for frag in [f"deck '{VASK}'", A, *frags]:
            assert frag in msg, (frag, msg)


@pytest.mark.parametrize(
    "primal,names,frag",
    [
        (VASK, ("Clay Golem", "Cern the Grey"), "exactly one Primal"),
        ("Bear", ("Clay Golem",), "its leader 'Bear' is a Creation in the set, not a Primal"),
        ("Vask", ("Clay Golem",), "its Primal 'Vask' is not in the set"),
        (VASK, ("Clay Golem", "Bearr"), "card 'Bearr' is not in the set; did you mean 'Bear'"),
        (VASK, ("Clay Golem", "Raven"), f"Primal '{VASK}' cannot play 'Raven' (CUN 1 > 0)"),
    ],
)
def test_bind_deck_checks_the_deck_in_the_set(primal, names, frag):
    """The rulebook's deck rules, checked in the set in force: one Primal, every
    card in the set and playable by the Primal; one line naming deck and card."""
    from balance.games.trisk.cards import bind_deck

    deck = config.StoredDeck("mine", 0, (), primal, names)
    with pytest.raises(UserError) as exc:
        bind_deck(load_card_set("reference"), deck, "deck 'mine'")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("deck 'mine' (card set 'reference', ")
    assert frag in msg, msg


def test_restricted_play_follows_the_card_by_name(tmp_path):
    """A side forbidden to play a card (restricted play masks rows) is forbidden the
    same named card in a set where that card sits on another row."""
    ref = load_card_set("reference")
    path = exchanged(tmp_path / "designer.toml", "Bear", "Fox")
    cs = load_card_set(path)
    a, _ = _sides()
    a = a.restricted_card(ref.row("Bear"), "Bear")
    bound = config.bind_side(_rules(path), a)
    assert bound.forbidden_ranks == 1 << cs.row("Bear") != a.forbidden_ranks


# --------------------------------------------------------------------------- the store
def test_a_stored_run_records_its_deck_by_name_and_rebuilds_it(tmp_path):
    """The stored run names its deck's Primal and cards; a report rebuilds the run
    (same key) against the run's own card set, by those names."""
    from balance import pages
    from balance.store import Store

    path = exchanged(tmp_path / "designer.toml", "Bear", "Fox")
    a, b = _sides()
    spec = runner.RunSpec(_rules(path), a, b, N, 1)
    rec = spec.resolved()["a"]["deck"]
    assert rec["primal_name"] == VASK and rec["names"] == _deck_names(A)
    cs = load_card_set(path)
    assert [cs.names[r] for r in rec["cards"]] == rec["names"]
    # and a restricted-play run (its mask is card rows of the run's set), as the power test stores
    restricted = runner.RunSpec(
        _rules(path), a.restricted_card(load_card_set("reference").row("Bear"), "Bear"), b, N, 1
    )
    assert restricted.a.forbidden_ranks == 1 << cs.row("Bear")
    runner.run_many([spec, restricted], store=Store(tmp_path / "results"), progress=False)
    runs, skipped = pages.load_runs([tmp_path / "results"])
    assert not skipped and len(runs) == 2
    back = {r.spec.key: r.spec for r in runs}
    assert set(back) == {spec.key, restricted.key}
    for orig in (spec, restricted):
        again = back[orig.key]
        assert list(again.a.deck.names) == rec["names"] and again.a.deck.cards == orig.a.deck.cards
        assert again.a.forbidden_ranks == orig.a.forbidden_ranks


# --------------------------------------------------------------------------- the command
@pytest.fixture
def designer_variant():
    """A Trisk variant file naming a designer's card set (a designer selects a set
    with ``card_set = "path"`` in a variant of configs/trisk/variants/); removed
    afterwards, with the folder when the test made it."""
    folder = config.CONFIG_DIR / "trisk" / "variants"
    made_folder = not folder.exists()
    files: list[Path] = []

    def make(card_set: Path) -> str:
        folder.mkdir(exist_ok=True)
        name = f"zz-test-designer-{os.getpid()}-{len(files)}"
        f = folder / f"{name}.toml"
        f.write_text(
            f'description = "a designer\'s set (test)"\n[rules]\n'
            f"card_set = {json.dumps(str(card_set))}\n",
            encoding="utf-8",
        )
        files.append(f)
        return name

    yield make
    for f in files:
        f.unlink(missing_ok=True)
    if made_folder:
        try:
            folder.rmdir()
        except OSError:
            pass


def _cli(args, folder: Path):
    from tests.cli.test_cli import run_cli

    folder.mkdir(exist_ok=True)
    return run_cli([str(x) for x in args], folder)


def _refused(res, folder: Path, *frags: str) -> str:
    err = res.stderr.strip()
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and len(err.splitlines()) == 1, err
    for frag in frags:
        assert frag in err, (frag, err)
    assert not any(folder.iterdir()), sorted(folder.rglob("*"))  # nothing written
    return err


@pytest.mark.slow
def test_cli_plays_the_named_cards_of_a_designers_set(tmp_path, designer_variant):
    variant = designer_variant(exchanged(tmp_path / "designer.toml", "Bear", "Fox"))
    common = ["--a", A, "--b", B, "-n", N, "--seed", 1, "--json"]
    base = _cli(["trisk", "simulate", *common], tmp_path / "base")
    mine = _cli(["trisk", "simulate", "--variant", variant, *common], tmp_path / "mine")
    assert base.returncode == 0 and mine.returncode == 0, (base.stderr, mine.stderr)
    x, y = json.loads(base.stdout), json.loads(mine.stdout)
    assert y["variant"] == variant
    assert (y["a_wins"], y["b_wins"], y["draws"]) == (x["a_wins"], x["b_wins"], x["draws"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "make,frag",
    [
        (lambda p: removed(p, "Bear"), "card 'Bear'"),
        (lambda p: changed(p, "Bear", "mig = 3\n", "mig = 3\ncun = 1\n"), "cannot play 'Bear'"),
    ],
)
def test_cli_refuses_an_illegal_deck_and_writes_nothing(make, frag, tmp_path, designer_variant):
    variant = designer_variant(make(tmp_path / "designer.toml"))
    work = tmp_path / "work"
    for cmd in (
        ["simulate", "--variant", variant, "--a", A, "--b", B, "-n", N],
        ["trace", "--variant", variant, "--a", A, "--b", B],
        ["compare", "--variants", variant, "--strategies", "tempo,rush", "-n", N],
        [
            "sprt",
            "--vs",
            variant,
            "--strategy",
            A,
            "--opponents",
            B,
            "--batch",
            10,
            "--max-games",
            40,
        ],
    ):
        _refused(_cli(["trisk", *cmd], work), work, frag, f"deck '{VASK}'")


# --------------------------------------------------------------------------- bad input (item 7)
@pytest.mark.slow
def test_cli_refuses_an_empty_deck_name(tmp_path):
    """``tempo@`` named no deck and played the default one."""
    work = tmp_path / "work"
    with pytest.raises(UserError, match="no deck named after '@'"):
        config.load_strategy("trisk", "tempo@")
    for args in (
        ["simulate", "--a", "tempo@", "-n", 20],
        ["trace", "--b", "rush@ "],
        ["compare", "--strategies", "tempo@,rush", "-n", 20],
    ):
        _refused(_cli(["trisk", *args], work), work, "no deck named after '@'")


@pytest.mark.slow
def test_cli_power_refuses_a_repeated_card_before_any_game(tmp_path):
    work = tmp_path / "work"
    for cards in ("Bear,Bear", "Bear,bear ", "Raven,Bear,Raven"):
        _refused(
            _cli(["trisk", "power", "--cards", cards, "--out", "p.html"], work),
            work,
            "--cards names",
            "twice",
        )


@pytest.mark.slow
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_budget_value_is_refused(value, tmp_path):
    """``nan`` in ``[budget]`` passed every check (``inf`` was refused only by
    the neutral card's budget check, and only in a field the neutral card uses)."""
    work = tmp_path / "work"
    for field in ("hp", "flying"):
        path = tmp_path / f"{field}.toml"
        head = re.sub(rf"(?m)^{field} = [0-9.]+", f"{field} = {value}", HEAD, count=1)
        assert f"\n{field} = {value} " in head
        _write(path, BLOCKS, head)
        with pytest.raises(
            UserError, match=rf"\[budget\]: field '{field}' must be a finite number"
        ):
            load_card_set(path)
        _refused(
            _cli(["trisk", "power", "--card-set", path, "--out", "p.html"], work),
            work,
            f"field '{field}' must be a finite number",
        )
        _refused(_cli(["trisk", "cards", "--card-set", path], work), work, "finite")
