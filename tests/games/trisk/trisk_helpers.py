"""Hand-built Trisk card tables and board states for the engine's rule tests.

The engine's leaf functions work on plain arrays (``sims.trisk.engine``):
``bd[seat, slot, F_*]`` (slot 0 the Primal), ``pl[seat, K_*]``, the deck ``dk``
and hand ``hd``. :class:`Game` builds such a state on a small card table whose
rows are named, so a test reads like the rulebook example it checks.
"""

from __future__ import annotations

import numpy as np

from kernels import rng
from kernels.contract import Side
from sims.trisk import cards as K
from sims.trisk import engine as E
from strategies.trisk import N_PARAMS, encode_strategy


def ability(shape, level, effect, target, n, param=-1, coins=K.COIN_NONE, group=-1):
    """One ability block (``A_*`` order)."""
    return [shape, level, effect, target, n, param, coins, group]


def active(level, effect, target, n, param=-1, coins=K.COIN_NONE, group=-1):
    return ability(K.SHAPE_ACTIVE, level, effect, target, n, param, coins, group)


def passive(level, effect, n, group=-1):
    return ability(K.SHAPE_PASSIVE, level, effect, K.T_SELF, n, -1, K.COIN_NONE, group)


def spell(effect, target, n, param=-1, coins=K.COIN_NONE, group=-1):
    return ability(K.SHAPE_SPELL, 0, effect, target, n, param, coins, group)


def card(
    type,
    kind=-1,
    onto=-1,
    mig=0,
    cun=0,
    wis=0,
    hp=1,
    ap=0,
    mp=0,
    armor=0,
    flying=0,
    resist=(),
    weak=(),
    attack=-1,
    group=-1,
    abilities=(),
) -> np.ndarray:
    """One row of the card table (layout ``sims.trisk.cards``)."""
    r = np.zeros(K.CARD_W, np.int64)
    r[K.C_TYPE], r[K.C_KIND], r[K.C_ONTO] = type, kind, onto
    r[K.C_MIG], r[K.C_CUN], r[K.C_WIS] = mig, cun, wis
    r[K.C_HP], r[K.C_AP], r[K.C_MP], r[K.C_ARMOR] = hp, ap, mp, armor
    r[K.C_FLYING] = int(flying)
    r[K.C_RESIST] = sum(1 << t for t in resist)
    r[K.C_WEAK] = sum(1 << t for t in weak)
    r[K.C_ATTACK_LEVEL] = attack
    r[K.C_GROUP] = group
    r[K.C_N_ABIL] = len(abilities)
    for i, a in enumerate(abilities):
        r[K.C_ABIL + i * K.A_W : K.C_ABIL + (i + 1) * K.A_W] = a
    return r


# kinds and groups of the toy set
ANIMAL, DRAGONLING, DRAGON, ELDER, HUMAN, WARRIOR, SHADE = range(7)
WOLF_G, BEAR_G = 0, 1

# name -> row; the Primals have MP 3 and 2 so that X amounts are told apart
TOY = {}


def _toy() -> np.ndarray:
    rows = {
        "Cern": card(K.PRIMAL, mig=3, cun=3, wis=3, hp=10, ap=1, mp=3, attack=10),
        "Vask": card(K.PRIMAL, mig=9, hp=10, ap=1, mp=2, attack=10),
        # Bear: 7 HP, Attack at 1, Hibernate (Asleep on itself, 3 tokens) at 3
        "Bear": card(
            K.CREATION,
            ANIMAL,
            mig=3,
            hp=7,
            ap=4,
            mp=2,
            attack=1,
            group=BEAR_G,
            abilities=[active(3, K.E_STATUS, K.T_SELF, 3, K.ASLEEP)],
        ),
        # Raven: flies, Attack at 3, Blind (1 token) on an enemy creation at 2
        "Raven": card(
            K.CREATION,
            ANIMAL,
            wis=2,
            hp=4,
            ap=2,
            mp=1,
            attack=3,
            flying=1,
            abilities=[active(2, K.E_STATUS, K.T_ENEMY_CREATION, 1, K.BLINDED)],
        ),
        "Dragonling": card(K.CREATION, DRAGONLING, mig=1, hp=8, ap=3, mp=1, attack=1),
        "Dragon": card(K.UPGRADE, DRAGON, DRAGONLING, mig=3, hp=12, ap=4, mp=1, flying=1, attack=0),
        "Elder Dragon": card(
            K.UPGRADE, ELDER, DRAGON, mig=5, hp=16, ap=5, mp=1, flying=1, armor=1, attack=0
        ),
        "Human": card(K.CREATION, HUMAN, hp=6, ap=2, attack=1),
        # an Upgrade with less HP than the creation it goes onto (R4 on upgrading)
        "Shade": card(K.UPGRADE, SHADE, HUMAN, hp=3, ap=6, attack=0),
        # Wolf: Howl (Feared on every enemy creation, a coin per Wolf) and Pack (+1 AP)
        "Wolf": card(
            K.CREATION,
            ANIMAL,
            cun=2,
            hp=6,
            ap=3,
            mp=1,
            attack=1,
            group=WOLF_G,
            abilities=[
                active(
                    1, K.E_STATUS, K.T_ALL_ENEMY_CREATIONS, 1, K.FEARED, K.COIN_PER_GROUP, WOLF_G
                ),
                passive(0, K.E_PACK, 1, WOLF_G),
            ],
        ),
        "Golem": card(K.CREATION, ANIMAL, hp=15, ap=3, attack=0),
        "Knight": card(K.CREATION, ANIMAL, hp=10, ap=2, armor=2, attack=0),
        "Salamander": card(
            K.CREATION,
            ANIMAL,
            hp=10,
            ap=2,
            resist=(K.FIRE, K.PHYSICAL),
            weak=(K.FROST,),
            attack=0,
            armor=1,
        ),
        # Stag: Ward from level 3, encoded as the card set loader does (amount 0)
        "Stag": card(
            K.CREATION, ANIMAL, hp=10, ap=2, attack=1, abilities=[passive(3, K.E_WARD, 0)]
        ),
        "Troll": card(
            K.CREATION,
            ANIMAL,
            hp=12,
            ap=2,
            mp=2,
            attack=1,
            abilities=[passive(2, K.E_REGEN, 2), passive(0, K.E_GROW, 3)],
        ),
        # abilities whose amount is X (the creation's own MP: 4)
        "Mage": card(
            K.CREATION,
            ANIMAL,
            wis=3,
            hp=6,
            ap=1,
            mp=4,
            attack=1,
            abilities=[active(0, K.E_DAMAGE, K.T_ENEMY_ANY, K.X_AMOUNT, K.ARCANE)],
        ),
        "Gambler": card(
            K.CREATION,
            ANIMAL,
            hp=6,
            ap=1,
            mp=1,
            attack=1,
            abilities=[active(0, K.E_DAMAGE, K.T_ENEMY_CREATION, 4, K.PHYSICAL, K.COIN_ONE)],
        ),
        "Scout": card(
            K.CREATION,
            ANIMAL,
            hp=6,
            ap=1,
            mp=1,
            attack=1,
            abilities=[active(0, K.E_DRAW, K.T_PLAYER, 3)],
        ),
        "Blessing of Growth": card(
            K.SORCERY, K.BLESSING, abilities=[spell(K.E_LEVEL, K.T_OWN_CREATION, K.X_AMOUNT)]
        ),
        "Curse of Fire": card(
            K.SORCERY,
            K.CURSE,
            abilities=[spell(K.E_DAMAGE, K.T_ENEMY_CREATION, K.X_AMOUNT, K.FIRE)],
        ),
        "Curse of Terror": card(
            K.SORCERY, K.CURSE, abilities=[spell(K.E_STATUS, K.T_ALL_ENEMY_CREATIONS, 1, K.FEARED)]
        ),
        "Curse of Bolts": card(
            K.SORCERY, K.CURSE, abilities=[spell(K.E_DAMAGE, K.T_ENEMY_ANY, 2, K.LIGHTNING)]
        ),
        "Ritual of Growth": card(
            K.SORCERY, K.RITUAL, abilities=[spell(K.E_LEVEL, K.T_OWN_CREATION, K.X_AMOUNT)]
        ),
        "Ritual of Slumber": card(
            K.SORCERY,
            K.RITUAL,
            abilities=[spell(K.E_STATUS, K.T_ENEMY_CREATION, K.X_AMOUNT, K.ASLEEP)],
        ),
        "Blessing of Cleansing": card(
            K.SORCERY, K.BLESSING, abilities=[spell(K.E_CLEANSE, K.T_OWN_CREATION, 1)]
        ),
    }
    TOY.clear()
    TOY.update({name: i for i, name in enumerate(rows)})
    return np.array(list(rows.values()), np.int64)


TOY_TABLE = _toy()
TOY_NAMES = tuple(TOY)


def rules_vector(table=None, **over) -> np.ndarray:
    # the toy set draws (its Scout): a designer's set, played with the R3 key on
    cfg = dict(E.DEFAULT_RULES, allow_draw_effects=True)
    cfg.update(over)
    return E.encode_rules(cfg, TOY_TABLE if table is None else table)


def int_rules(**over) -> np.ndarray:
    return E.split_rules(rules_vector(**over))[0]


def weights(spec: dict) -> np.ndarray:
    """A strategy's weight vector (``P_*`` indices) from a TOML-like dict."""
    v = encode_strategy(spec, Side())
    return v[int(v[3]) : int(v[3]) + N_PARAMS].copy()


class Deck:
    def __init__(self, primal, cards):
        self.primal = primal
        self.cards = list(cards)


def side(spec: dict, primal: str, cards, table=None, forbidden: int = 0) -> np.ndarray:
    """A side vector on the toy table (cards by name)."""
    nc = len(TOY_TABLE) if table is None else len(table)
    rows = [TOY[c] if isinstance(c, str) else c for c in cards]
    p = TOY[primal] if isinstance(primal, str) else primal
    return encode_strategy(spec, Side(forbidden=forbidden, deck=Deck(p, rows), n_cards=nc))


class Game:
    """A hand-built board on the toy table, with the engine's work arrays."""

    def __init__(self, primals=("Cern", "Cern"), seed=1, table=None, **rules):
        self.table = TOY_TABLE if table is None else table
        # a toy-shaped table (a modified copy) keeps the toy names
        self.names = TOY_NAMES if self.table.shape == TOY_TABLE.shape else None
        self.rules = E.split_rules(rules_vector(self.table, **rules))[0]
        self.bd = np.zeros((2, E.MAX_SLOTS, E.BF), np.int64)
        self.pl = np.zeros((2, E.KW), np.int64)
        self.dk = np.zeros((2, 40), np.int64)
        self.hd = np.full((2, E.MAX_HAND), -1, np.int64)
        self.cand = np.zeros((E.MAXC, E.CW), np.int64)
        self.feats = np.zeros((E.MAXC, 64), np.float64)
        self.tg = np.zeros((E.MAXC, 2), np.int64)
        self.rngs = np.zeros((6, 4), np.uint64)
        self.log = np.zeros((E.MAX_LOG, E.LOG_W), np.int64)
        self.ints = np.zeros(4, np.int64)
        self.forb = np.zeros(len(self.table), np.int64)
        self.reseed(seed)
        for p in range(2):
            self.bd[p, 0, E.F_CARD] = self.row(primals[p])
            self.bd[p, 0, E.F_STACK] = 1
            self.pl[p, E.K_NB] = 1

    def reseed(self, seed):
        """Seed the coins-of-play stream (and the noise streams)."""
        for k in range(6):
            rng.seed_state(self.rngs[k], np.uint64(seed), 0, E.PURPOSE_PLAY_COINS + 10 * k)

    def row(self, name):
        return TOY[name] if isinstance(name, str) else int(name)

    # ---- building -------------------------------------------------------------------------
    def add(self, p, name, level=0, dmg=0, **tokens) -> int:
        """Put a creation into play for seat ``p``; returns its slot."""
        s = self.pl[p, E.K_NB]
        self.bd[p, s, :] = 0
        self.bd[p, s, E.F_CARD] = self.row(name)
        self.bd[p, s, E.F_LEVEL] = level
        self.bd[p, s, E.F_DMG] = dmg
        self.bd[p, s, E.F_STACK] = 1
        for st, n in tokens.items():
            self.bd[p, s, E.F_TOK + K.STATUSES.index(st.capitalize())] = n
        self.pl[p, E.K_NB] = s + 1
        return s

    def give(self, p, *names):
        """Put cards into seat ``p``'s hand."""
        for n in names:
            h = self.pl[p, E.K_HANDN]
            self.hd[p, h] = self.row(n)
            self.pl[p, E.K_HANDN] = h + 1

    def deck(self, p, *names):
        for i, n in enumerate(names):
            self.dk[p, i] = self.row(n)
        self.pl[p, E.K_DECKN] = len(names)
        self.pl[p, E.K_POS] = 0

    # ---- reading ----------------------------------------------------------------------------
    def tok(self, p, s, status):
        return int(self.bd[p, s, E.F_TOK + K.STATUSES.index(status)])

    def dmg(self, p, s):
        return int(self.bd[p, s, E.F_DMG])

    def level(self, p, s):
        return int(self.bd[p, s, E.F_LEVEL])

    def card_at(self, p, s):
        c = int(self.bd[p, s, E.F_CARD])
        return self.names[c] if self.names else c

    def board(self, p):
        return [self.card_at(p, s) for s in range(1, self.pl[p, E.K_NB])]

    def hp_left(self, p, s):
        return int(E.hp(self.table, self.bd, p, s)) - self.dmg(p, s)

    def hand(self, p):
        return [
            self.names[int(c)] if self.names else int(c)
            for c in self.hd[p, : self.pl[p, E.K_HANDN]]
        ]

    # ---- the engine's own functions ------------------------------------------------------------
    def candidates(self, p):
        """The Creation phase's legal steps as tuples (kind, hand card, slot, ability,
        target seat, target slot); candidate 0 is stop."""
        n = E.play_candidates(
            self.rules,
            self.table,
            self.bd,
            self.pl,
            self.hd,
            self.forb,
            p,
            self.cand,
            self.feats,
            self.tg,
        )
        out = []
        for k in range(n):
            c = [int(x) for x in self.cand[k]]
            h = c[E.CH]
            name = self.names[int(self.hd[p, h])] if h >= 0 and self.names else h
            out.append((c[E.CK], name, c[E.CS], c[E.CA], c[E.CTP], c[E.CTS]))
        return out

    def do(self, p, kind, hand_card=None, s=-1, a=-1, tp=-1, ts=-1, turn=1):
        """Carry out one Creation-phase step with ``do_play``; returns its 'Primal fell'."""
        h = -1
        if hand_card is not None:
            h = self.hand(p).index(hand_card)
        self.cand[1, :] = (kind, h, s, a, tp, ts)
        return int(
            E.do_play(
                self.rules,
                self.table,
                self.bd,
                self.pl,
                self.dk,
                self.hd,
                p,
                self.cand,
                1,
                self.rngs,
                self.log,
                self.ints,
                True,
                turn,
            )
        )

    def effect(self, p, effect, n, param, tp, ts, turn=1):
        return int(
            E.apply_effect(
                self.rules,
                self.table,
                self.bd,
                self.pl,
                self.dk,
                self.hd,
                p,
                effect,
                n,
                param,
                tp,
                ts,
                self.log,
                self.ints,
                True,
                turn,
            )
        )

    def end_turn(self, p, turn=1):
        return int(E.end_of_turn(self.table, self.bd, self.pl, p, self.log, self.ints, True, turn))

    def sweep(self, p, turn=1):
        E.sweep(self.table, self.bd, self.pl, p, self.log, self.ints, True, turn)

    def can_attack(self, p, s):
        return bool(E.can_attack(self.rules, self.table, self.bd, p, s))

    def can_block(self, q, b, p, s):
        """Creation ``b`` of ``q`` may block attacker ``s`` of ``p``."""
        return bool(E.can_block(self.table, self.bd, q, b, E.flying(self.table, self.bd, p, s)))

    def damage(self, p, attacks):
        """``damage_step`` for seat ``p``'s attacks ``[(attacker slot, blocker slot or None)]``."""
        atk = np.zeros(E.MAX_SLOTS, np.int64)
        blk = np.zeros(E.MAX_SLOTS, np.int64)
        for i, (s, b) in enumerate(attacks):
            atk[i] = s
            blk[i] = -2 if b is None else b
        return int(
            E.damage_step(
                self.rules,
                self.table,
                self.bd,
                self.pl,
                p,
                atk,
                blk,
                len(attacks),
                self.rngs,
                self.log,
                self.ints,
                True,
                1,
            )
        )

    def fear_flips(self, q):
        ok = np.zeros(E.MAX_SLOTS, np.int64)
        E.fear_flips(self.bd, self.pl, q, self.rngs, ok, self.log, self.ints, True, 1)
        return ok

    def blocks(self, p, attackers, fear_ok, spec):
        """``blocks`` by seat ``1 - p`` against ``attackers`` (slots of ``p``) with the
        defender's strategy ``spec``; returns the blocker slot of each (-2 none)."""
        atk = np.zeros(E.MAX_SLOTS, np.int64)
        blk = np.full(E.MAX_SLOTS, -1, np.int64)
        for i, s in enumerate(attackers):
            atk[i] = s
        scores = np.zeros(E.MAXC, np.float64)
        slots = np.zeros(E.MAX_SLOTS + 1, np.int64)
        used = np.zeros(E.MAX_SLOTS, np.int64)
        E.blocks(
            self.rules,
            self.table,
            self.bd,
            self.pl,
            weights(spec),
            p,
            atk,
            blk,
            len(attackers),
            fear_ok,
            self.feats,
            scores,
            slots,
            self.rngs[5],
            used,
            self.log,
            self.ints,
            True,
            1,
        )
        return [int(b) for b in blk[: len(attackers)]]

    def gate(self, p, name, i=0):
        return bool(
            E.gate_flip(
                self.table,
                self.bd,
                self.pl,
                p,
                self.row(name),
                i,
                self.rngs,
                self.log,
                self.ints,
                False,
                1,
            )
        )

    def events(self, code=None):
        ev = self.log[: self.ints[0]]
        return ev if code is None else ev[ev[:, 2] == code]


# every decision section's weights at zero but what is given
MUSTER_ONLY = {"primal": {"muster": 1.0}, "play": {"stop": 1.0}, "attack": {"bias": -1.0}}


def binomial_ok(k: int, n: int, p: float, z: float = 5.0) -> bool:
    """``k`` successes in ``n`` trials is within ``z`` standard deviations of ``p``."""
    sd = (n * p * (1 - p)) ** 0.5
    return abs(k - n * p) <= z * max(sd, 0.5)
