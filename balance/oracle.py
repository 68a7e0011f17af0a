"""The best-response oracle of the equilibrium search (``docs/equilibrium.md``,
"The oracle").

A best-response search that finds nothing proves nothing: every member of a
mixture's support scores exactly ½ against it, so a "best response" scoring
below the population's best member is a search that failed, not evidence of
an equilibrium. This module is the search and its honesty rules:

1. **Weight sets.** The members' own weights (the support first, then the
   members scoring best against the mixture), the game's tuned strategy and
   random weight sets drawn in the tuned space (:func:`weight_sets`).
2. **The screen.** Every content choice the game offers (each loadout, each
   deck; one choice where the sides choose none) played with every weight set
   against the mixture (:func:`screen`).
3. **Restarts by successive halving.** CMA-ES (:func:`balance.tune.tune`)
   from the best screened starts, each on its own content where the game has
   several, the last from the best random set, with first steps from narrow
   to wide (:func:`restart_steps`): a narrow step refines a good start, a
   wide one crosses the plateaus where a change of weights changes no
   decision. Every restart runs ``budget`` evaluations; the better half go
   on to twice as many, and so on until one is left (:func:`halving`).
4. **Finalists on fresh deals.** Each restart's best few and its start, and
   the population's best member, replayed on common fresh deals; the best
   there is the response. The best member is always a candidate, so the
   answer is never below it.
5. **A failed search.** When the search's own best (its starts and
   finalists) is below the best member by more than noise (the paired
   difference's 95% interval wholly below 0), it never reached the level of
   the strategies it set out from: the search failed. It escalates (twice
   the evaluations and random sets, other seeds) and, if it still fails,
   says so (``failed``): the stopping rule then answers "not shown", never
   "equilibrium".
6. **Its gain** over ½, measured again on deals no search saw.

:class:`Settings` holds the oracle's budget; :meth:`Settings.audit` the
stronger settings of the audit (an independent search before every claim:
another seed, at least four times the evaluations). The core names no game:
content comes from :func:`content_choices`.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace

import numpy as np

from balance import config, stats, tune
from balance.errors import UserError
from balance.registry import get_game

BUDGET = 128  # CMA-ES evaluations of each restart's first stage
RESTARTS = 8  # CMA-ES runs per search, each from its own start
MEMBER_SETS = 8  # members' weight sets screened with each content choice
RANDOM_SETS = 4  # random weight sets screened with each content choice
SEARCH_GAMES = 600  # games of each candidate against the mixture, split by weight
SCREEN_GAMES = 400  # games of each screened start (content choice, weight set), split by weight
CONFIRM_GAMES = 4000  # games per opponent that measure a response's gain (fresh deals)
STEP = 0.1  # the first restart's first step, a share of each weight's range
WIDE_STEP = 0.3  # the last restart's: wide, to cross the plateaus where weights change no decision
ESCALATIONS = 1  # a failed search is searched again this many times, each time stronger
EXTRA_MIN = 0.02  # a further response of a search: beating the mixture by more than this
PERTURB = 0.2  # a random start near a member: its weights moved by this share of their ranges (SD)
AUDIT_FACTOR = 4  # the audit's evaluations: at least this many times the oracle's
AUDIT_CONFIRM = 4  # ... and this many times its confirmation games (a tighter interval)
SUPPORT_MIN = 1e-6  # weights below this are outside the mixture's support


@dataclass(frozen=True)
class Settings:
    """How hard the oracle searches (module docstring). ``evaluations`` is
    the CMA-ES evaluations of one search (every restart's together)."""

    budget: int = BUDGET
    restarts: int = RESTARTS
    member_sets: int = MEMBER_SETS
    random_sets: int = RANDOM_SETS
    search_games: int = SEARCH_GAMES
    screen_games: int = SCREEN_GAMES
    confirm_games: int = CONFIRM_GAMES
    step: float = STEP
    escalations: int = ESCALATIONS
    responses: int = 1  # responses a search may add: the best, and the best of other restarts
    top: int = tune.TOP
    refine: int = tune.REFINE

    def __post_init__(self):
        from balance import runner

        for n, what in (
            (self.search_games, "--search-games"),
            (self.screen_games, "--screen-games"),
            (self.confirm_games, "--confirm-games"),
        ):
            runner.check_games(n, what)
            if n % 2:
                raise UserError(f"{what} must be even (seat-swapped pairs), got {n}")
        if not 1 <= self.budget <= 100_000:
            raise UserError(f"--budget must be between 1 and 100000 evaluations, got {self.budget}")
        if not 1 <= self.restarts <= 50:
            raise UserError(f"--restarts must be between 1 and 50, got {self.restarts}")
        if not 0 < self.step <= 0.5:
            raise UserError(f"--step must be above 0 and at most 0.5, got {self.step}")
        if not 1 <= self.responses <= 10:
            raise UserError(f"--responses must be between 1 and 10, got {self.responses}")
        for n, what in (
            (self.member_sets, "member weight sets"),
            (self.random_sets, "random weight sets"),
            (self.escalations, "escalations"),
        ):
            if n < 0:
                raise UserError(f"{what} must be at least 0, got {n}")

    @property
    def evaluations(self) -> int:
        """CMA-ES evaluations of one search, every restart's together, through
        the successive halving (:func:`halving`)."""
        return sum(n * b for n, b in halving(self.restarts, self.budget))

    def audit(self, factor: int = AUDIT_FACTOR) -> Settings:
        """The audit's settings: twice the restarts (the landscape has many
        peaks: more starts find more of them), each restart's first stage
        grown until the search spends at least ``factor`` times the
        evaluations, twice the weight sets screened, every screen at the
        search's games, ``AUDIT_CONFIRM`` times the confirmation games (the
        audit's interval is the exploitability a claim reports)."""
        restarts = 2 * self.restarts
        stages = sum(n * b for n, b in halving(restarts, 1))  # evaluations per unit of budget
        budget = math.ceil(factor * self.evaluations / stages)
        return replace(
            self,
            budget=budget,
            restarts=restarts,
            member_sets=2 * max(self.member_sets, 1),
            random_sets=2 * max(self.random_sets, 1),
            screen_games=max(self.screen_games, self.search_games),
            confirm_games=AUDIT_CONFIRM * self.confirm_games,
        )

    def stronger(self) -> Settings:
        """An escalation's settings: twice the evaluations per restart and twice
        the random sets."""
        return replace(self, budget=2 * self.budget, random_sets=2 * max(self.random_sets, 1))

    def as_dict(self) -> dict:
        return {
            "budget": self.budget,
            "restarts": self.restarts,
            "evaluations": self.evaluations,
            "member_sets": self.member_sets,
            "random_sets": self.random_sets,
            "search_games": self.search_games,
            "screen_games": self.screen_games,
            "confirm_games": self.confirm_games,
            "step": self.step,
            "escalations": self.escalations,
            "responses": self.responses,
        }


def halving(restarts: int, budget: int) -> list[tuple[int, int]]:
    """The stages of the successive halving: ``(restarts still running, the
    evaluations each has run by the stage's end)``: all ``restarts`` to
    ``budget``, then the better half (rounded up) to twice that, and so on
    until one is left and has run its last doubling (one restart: one stage).
    Each stage adds ``restarts × (its budget − the last)`` evaluations."""
    out, n, b = [], restarts, budget
    out.append((n, b))
    while n > 1:
        n = math.ceil(n / 2)
        b *= 2
        out.append((n, b))
    # evaluations added per stage: n restarts × (b - previous b)
    added, prev = [], 0
    for n, b in out:
        added.append((n, b - prev))
        prev = b
    return added


def restart_steps(settings: Settings) -> list[float]:
    """Each restart's first step: from ``settings.step`` to :data:`WIDE_STEP`,
    evenly on a log scale (one restart: the narrow step alone)."""
    lo, hi, n = settings.step, max(settings.step, WIDE_STEP), settings.restarts
    if n == 1:
        return [lo]
    return [float(lo * (hi / lo) ** (j / (n - 1))) for j in range(n)]


@dataclass
class Response:
    """What the oracle found: the response, its gain over ½ on fresh deals
    (``mean``, ``lo``, ``hi``, ``se``, ``n``, ``games``, ``seed``), whether it
    is a member of the population (nothing better found), whether the search
    failed, and what was tried (``detail``)."""

    strategy: config.Strategy
    gain: dict
    member: bool
    failed: bool
    detail: dict = field(default_factory=dict)


def _specs_key(st: config.Strategy) -> str:
    import json

    return json.dumps([st.spec, [list(t) for t in st.by_primal]], sort_keys=True, default=str)


def _strip(st: config.Strategy) -> config.Strategy:
    """A member as a weight set: the part of its name before '@'."""
    return replace(st, name=st.name.partition("@")[0])


def weight_sets(
    arena, members: list, p: np.ndarray, settings: Settings, seed: int
) -> list[tuple[str, config.Strategy]]:
    """The weight sets screened: ``(origin, strategy)`` with origin
    ``"member"``, ``"tuned"`` or ``"random"``. Members: the support by weight,
    then the others by their score against the mixture (read off the matrix),
    at most ``settings.member_sets`` distinct tables (a member with a table per
    deck counts once: each deck plays its own table). The game's ``tuned``
    strategy where it has one. Random: ``settings.random_sets`` starting
    points in the tuned space (its bounds, ``configs/<game>/tune.toml``),
    every other one drawn uniformly, the others a member's or the tuned
    strategy's weights moved a random step (normal, :data:`PERTURB` of each
    range); temperatures held at the base's."""
    A = arena.payoffs(members)
    v = A @ p
    order = sorted(
        range(len(members)), key=lambda i: (-int(p[i] > SUPPORT_MIN), -float(p[i]), -float(v[i]), i)
    )
    out: list[tuple[str, config.Strategy]] = []
    seen: set[str] = set()
    for i in order:
        if len([o for o, _ in out if o == "member"]) >= settings.member_sets:
            break
        st = _strip(members[i])
        key = _specs_key(st)
        if key not in seen:
            seen.add(key)
            out.append(("member", st))
    try:
        tuned = config.load_strategy(arena.game, "tuned")
    except UserError:
        tuned = None
    if tuned is not None and _specs_key(tuned) not in seen:
        seen.add(_specs_key(tuned))
        out.append(("tuned", _strip(tuned)))
    if settings.random_sets:
        # random starting points: every other one drawn uniformly in the tuned space,
        # the others a member's weights moved a random step (normal, PERTURB of each
        # weight's range) - a random point far from every good strategy rarely recovers
        # in a short search, one near a good strategy in another basin can
        bases = [st for o, st in out if o != "random"] or [_strip(members[order[0]])]
        rng = np.random.default_rng(seed % (2**63))
        for r in range(settings.random_sets):
            base = replace(bases[(r // 2) % len(bases)], by_primal=())
            if base.by_primal or not base.spec:
                base = replace(_strip(members[order[0]]), by_primal=())
            sp = tune.space(arena.game, base, arena.bounds)
            if r % 2 == 0:
                u = np.clip(sp.to_unit(sp.start()) + rng.normal(0, PERTURB, sp.dim), 0, 1)
                kind = "near"
            else:
                u = rng.uniform(size=sp.dim)
                kind = "uniform"
            vals = sp.values(u)
            for j, prm in enumerate(sp.params):
                if "temperature" in prm.key:
                    vals[j] = prm.start
            out.append(("random", replace(base, name=f"random{r + 1}-{kind}", spec=sp.spec(vals))))
    return out


def screen(arena, sets, opponents: list, w: list, settings: Settings, seed: int, label: str):
    """Every content choice with every weight set against the mixture
    (``opponents``, ``w``): ``settings.screen_games`` games each on ``seed``,
    split by weight (:func:`balance.tune.allot`); a row per (choice, set),
    ``score`` its score against the mixture with its interval
    (:func:`balance.tune.stratified_score`)."""
    from balance import runner

    kind, choices = content_choices(arena.ruleset)
    if not choices:
        choices = [("", lambda s: s)]
    counts = tune.allot(settings.screen_games, w)
    sides = []
    for i, (origin, st) in enumerate(sets):
        for c, apply in choices:
            side = apply(st)
            side = replace(side, name=f"{label}-s{i}" + _at(c), by_primal=())
            sides.append({"content": c, "origin": origin, "set": st.name, "side": side})
    specs = [
        runner.RunSpec(arena.ruleset, s["side"], o, n, seed)
        for s in sides
        for o, n in zip(opponents, counts, strict=True)
    ]
    label = f"screening {len(sides)} starts" + (f" ({len(choices)} {kind}s)" if kind else "")
    res = arena.run(specs, label)
    k = len(opponents)
    for i, s in enumerate(sides):
        s.update(tune.stratified_score(res[i * k : (i + 1) * k], w))
    return sides


def pick_starts(rows: list[dict], settings: Settings) -> list[dict]:
    """The restarts' starts, from the screen's rows: the best row; then the best
    row of each content choice not yet started from, in order of score; the
    last restart from the best random set (random starting points as well as
    the members'). Fewer good rows than restarts (a game without content, a
    small population): the best rows again, in order — each restart searches
    on its own seed with its own first step, so a start run twice is two
    searches. Ties are broken by the row's order."""
    ranked = sorted(range(len(rows)), key=lambda i: (-rows[i]["score"], i))
    n = settings.restarts
    randoms = [i for i in ranked if rows[i]["origin"] == "random"]
    good = [i for i in ranked if rows[i]["origin"] != "random"] or ranked
    want_random = bool(randoms) and n >= 2
    picked: list[int] = []
    for i in good:
        if len(picked) >= n - want_random:
            break
        if any(rows[j]["content"] == rows[i]["content"] for j in picked):
            continue
        picked.append(i)
    for i in good:  # fewer content choices than restarts: the next best rows
        if len(picked) >= n - want_random:
            break
        if i not in picked:
            picked.append(i)
    k = 0
    while len(picked) < n - want_random:  # fewer good rows than restarts: again, in order
        picked.append(picked[k])
        k += 1
    if want_random:
        picked.append(randoms[0])
    return [rows[i] for i in picked]


def _points(arena, side, opponents, w, games: int, seed: int, label: str) -> np.ndarray:
    from balance import runner

    specs = [runner.RunSpec(arena.ruleset, side, o, games, seed) for o in opponents]
    return tune.deal_points(arena.run(specs, label), w)


def fresh_games(settings: Settings, opponents: int) -> int:
    """Games per opponent of the fresh replays: ``refine`` times a candidate's
    search games, spread evenly (whole pairs), so candidates compare deal by
    deal against every opponent."""
    n = math.ceil(settings.refine * settings.search_games / max(opponents, 1))
    return int(n + n % 2)


def search(arena, members: list, p: np.ndarray, settings: Settings, *, tag: str, name: str) -> dict:
    """One search (no gain measured yet): weight sets, the screen, the
    restarts by successive halving (every restart runs ``budget``
    evaluations; the better half by their fresh-deal best go on to twice the
    evaluations, and so on until one is left and has run its last doubling:
    the search goes deep where it pays), and every candidate on common fresh
    deals. Returns the candidates (each ``{"side", "points", "origin",
    "member"}``), the screen's rows, each restart's trail and the evaluations
    spent."""

    idx, w = _weights(p)
    opponents = [members[i] for i in idx]
    sets = weight_sets(arena, members, p, settings, derive_seed(arena.seed, tag, "random"))
    rows = screen(arena, sets, opponents, w, settings, derive_seed(arena.seed, tag, "screen"), name)
    starts = pick_starts(rows, settings)
    fresh = derive_seed(arena.seed, tag, "fresh")
    per = fresh_games(settings, len(opponents))
    counts = tune.allot(settings.search_games, w)
    runs: list[dict] = [
        {
            "j": j,
            "start": replace(row["side"], name=f"{name}-{j}start" + _at(row["content"])),
            "step": step,
            "row": row,
            "trail": [],
            "finalists": [],
        }
        for j, (row, step) in enumerate(zip(starts, restart_steps(settings), strict=True))
    ]

    def go(r: dict, budget: int) -> None:
        tr = tune.tune(
            arena.game,
            r["start"],
            opponents,
            ruleset=arena.ruleset,
            budget=budget,
            games=max(2, per // settings.refine),
            seed=derive_seed(arena.seed, tag, "restart", r["j"]),
            results=arena.store.root if arena.store is not None else None,
            threads=arena.threads,
            name=f"{name}-{r['j']}",
            bounds=arena.bounds,
            top=settings.top,
            refine=settings.refine,
            sigma0=r["step"],
            progress=arena.progress,
            weights=w,
            fresh=fresh,
            allot=counts,
        )
        arena.keys += tr.run_keys
        r["best"] = tr.tuned_score["score"]
        r["trail"].append({"evaluations": len(tr.history), "fresh_best": r["best"]})
        r["finalists"] += [replace(tr.tuned, spec=f["spec"]) for f in tr.finalists]

    alive, budget = list(runs), settings.budget
    while True:
        for r in alive:
            go(r, budget)
        if len(alive) == 1:
            break
        alive = sorted(alive, key=lambda r: (-r["best"], r["j"]))[: math.ceil(len(alive) / 2)]
        budget *= 2
    cands = []
    for r in runs:
        cands.append({"side": r["start"], "origin": "start", "restart": r["j"]})
        cands += [{"side": f, "origin": "search", "restart": r["j"]} for f in r["finalists"]]
    # the population's best member (against the mixture, on the matrix): a candidate too
    A = arena.payoffs(members)
    v = A @ p
    best = max(range(len(members)), key=lambda i: (round(float(v[i]), 9), float(p[i]), -i))
    known = [m.vector() for m in members]
    uniq, seen = [], []
    for c in cands:  # the search's own, each once
        vec = c["side"].vector()
        if any(np.array_equal(vec, x) for x in seen):
            continue
        seen.append(vec)
        c["member"] = any(np.array_equal(vec, x) for x in known)
        uniq.append(c)
    # the best member as a candidate of its own (even where a start plays as it does):
    # the floor the search is measured against
    uniq.append({"side": members[best], "origin": "member", "restart": -1, "member": True})
    for c in uniq:
        c["points"] = _points(arena, c["side"], opponents, w, per, fresh, "fresh deals")
    return {
        "candidates": uniq,
        "rows": rows,
        "restarts": [
            {
                "start": f"{r['row']['set']}" + _at(r["row"]["content"]),
                "origin": r["row"]["origin"],
                "screen": r["row"]["score"],
                "step": round(r["step"], 4),
                "trail": r["trail"],
            }
            for r in runs
        ],
        "evaluations": sum(r["trail"][-1]["evaluations"] for r in runs),
        "opponents": opponents,
        "weights": w,
    }


def _at(content: str) -> str:
    return f"@{content}" if content else ""


def compare(cands: list[dict]) -> tuple[dict, dict | None, dict]:
    """The best candidate, the search's own best (its starts and finalists:
    every candidate but the population's best member, added as a candidate
    of its own; None if none) and the search's best minus the best member,
    paired on the common fresh deals (``mean``, ``lo``, ``hi``; empty
    without both)."""
    best = max(cands, key=lambda c: float(c["points"].mean()))
    found = [c for c in cands if c.get("origin") != "member"]
    mem = [c for c in cands if c["member"]]
    s_best = max(found, key=lambda c: float(c["points"].mean())) if found else None
    m_best = max(mem, key=lambda c: float(c["points"].mean())) if mem else None
    diff = {}
    if s_best is not None and m_best is not None:
        diff = stats.paired_diff(s_best["points"] - m_best["points"])
    return best, s_best, diff


def failed(diff: dict) -> bool:
    """A failed search: its own best (its starts and finalists) is below the
    population's best member beyond noise (the paired difference's 95%
    interval wholly below 0): it never reached the level of the strategies it
    set out from. (At a pure equilibrium every deviation loses: a search that
    starts from the member and finds nothing better has reached it.)"""
    hi = diff.get("hi")
    return hi is not None and math.isfinite(float(hi)) and float(hi) < 0


def best_response(
    arena,
    members: list,
    p: np.ndarray,
    settings: Settings,
    *,
    tag: str,
    name: str,
    label: str | None = None,
) -> Response:
    """The oracle (module docstring): the best response found to the mixture
    ``p`` over ``members``, escalating a failed search, its gain measured on
    deals no search saw. ``tag`` names the search's seeds (another tag:
    another, independent search); ``name`` the response (``name@content``);
    ``label`` the candidates the search plays (default ``name``)."""
    label = label or name
    s = settings
    found = search(arena, members, p, s, tag=tag, name=label)
    cands, tries = list(found["candidates"]), [found]
    best, s_best, diff = compare(cands)
    escalated = 0
    while failed(diff) and escalated < settings.escalations:
        escalated += 1
        s = s.stronger()
        more = search(arena, members, p, s, tag=f"{tag}:x{escalated}", name=f"{label}x{escalated}")
        tries.append(more)
        # each search's candidates were replayed on its own fresh deals: the later,
        # stronger search's replay (which holds the best member again) decides
        cands = list(more["candidates"])
        best, s_best, diff = compare(cands)
    is_failed = failed(diff)
    side = best["side"]
    is_member = bool(best["member"])
    if is_member:
        # the member itself, under its own name (it is already in the population)
        vec = side.vector()
        side = next(m for m in members if np.array_equal(m.vector(), vec))
    else:
        content = side.name.partition("@")[2]
        side = replace(side, name=name + _at(content), by_primal=())
    gain = measure_gain(arena, side, found["opponents"], found["weights"], s, tag)
    also = []
    if not is_member and not is_failed and settings.responses > 1:
        # more responses from the same search: each other restart's best, where it
        # beats the mixture by more than ε on the fresh deals (its gain then measured
        # like the first's); the loop adds those its rule adds
        taken = {best["restart"]}
        others = sorted(
            (c for c in cands if not c["member"] and c["restart"] not in taken),
            key=lambda c: -float(c["points"].mean()),
        )
        for c in others:
            if len(also) >= settings.responses - 1:
                break
            if c["restart"] in taken or float(c["points"].mean()) - 0.5 <= EXTRA_MIN:
                continue
            taken.add(c["restart"])
            letter = "bcdefghijk"[len(also)]
            extra = replace(
                c["side"],
                name=f"{name}{letter}" + _at(c["side"].name.partition("@")[2]),
                by_primal=(),
            )
            g = measure_gain(arena, extra, found["opponents"], found["weights"], s, tag)
            also.append((extra, g))
    detail = {
        "evaluations": sum(t["evaluations"] for t in tries),
        "escalations": escalated,
        "screened": len(found["rows"]),
        "restarts": [r for t in tries for r in t["restarts"]],
        "search_vs_member": {k: plain(v) for k, v in diff.items()} if diff else {},
        "search_best": float(s_best["points"].mean()) - 0.5 if s_best is not None else None,
        "settings": s.as_dict(),
        "tag": tag,
        "also": also,
    }
    arena.screens.append(
        [
            {x: v for x, v in r.items() if x != "side"}
            for r in _best_per_content(found["rows"], member_only=True)
        ]
    )
    return Response(side, gain, is_member, is_failed, detail)


def _best_per_content(rows: list[dict], member_only: bool = False) -> list[dict]:
    """Each content choice's best row (the members' weight sets alone with
    ``member_only``), in the choices' order, each naming whose weights gave
    it (``weights_of``)."""
    best: dict[str, dict] = {}
    for r in rows:
        if member_only and r["origin"] == "random":
            continue
        c = r["content"]
        if c not in best or r["score"] > best[c]["score"]:
            best[c] = {**r, "weights_of": r["set"]}
    return list(best.values())


def measure_gain(arena, side, opponents: list, w: list, settings: Settings, tag: str) -> dict:
    """``side``'s score against the mixture − ½ on deals no search saw
    (:func:`gain_interval`)."""
    from balance import runner

    seed = derive_seed(arena.seed, tag, "confirm")
    specs = [
        runner.RunSpec(arena.ruleset, side, o, settings.confirm_games, seed) for o in opponents
    ]
    runs = arena.run(specs, "fresh deals")
    sc = tune.mixture_score(runs, w)
    return {**gain_interval(tune.deal_points(runs, w)), "games": sc["games"], "seed": seed}


# ---- seeds, weights, content, gains: shared with the equilibrium loop ---------------------
def derive_seed(seed: int, *parts) -> int:
    """A seed for one step of the search, derived from ``seed`` and the step's
    name (never equal to ``seed``): each search and each measurement plays
    its own deals."""
    text = "balance-equilibrium:" + ":".join(str(p) for p in (seed, *parts))
    s = int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)
    return s if s != seed else s + 1


def _weights(p: np.ndarray) -> tuple[list[int], list[float]]:
    idx = [i for i, x in enumerate(p) if x > SUPPORT_MIN]
    w = np.array([p[i] for i in idx], float)
    w = w / w.sum()
    return idx, [float(x) for x in w]


def content_choices(ruleset: config.Ruleset) -> tuple[str, list]:
    """The content a side chooses before play, as ``(kind, [(name, apply)])``:
    an engine with loadouts gives every loadout the rules allow, a game with
    decks every deck of the ruleset's card set; ``apply(strategy)`` is the
    strategy playing it. ``("", [])`` for a game where the sides choose none."""
    g = get_game(ruleset.game)
    eng = g.engine_module()
    if hasattr(eng, "legal_loadouts"):
        return "loadout", [
            (eng.loadout_name(i), lambda s, i=i: s.with_loadout(i))
            for i in eng.legal_loadouts(ruleset.rules)
        ]
    if g.card_sets:
        cs = ruleset.card_set()
        decks = g.card_set_module().load_decks(cs)
        return "deck", [
            (name, lambda s, d=d: replace(s.with_deck(d, cs.n_cards), by_primal=()))
            for name, d in decks.items()
        ]
    return "", []


FEW = 10  # at most this many deals off ½: the ends are Clopper–Pearson's (gain_interval)


def gain_interval(x, alpha: float = 0.05) -> dict:
    """A response's gain over ½ from its per-deal scores ``x`` (0..1, one per
    deal, weighted over the mixture): the mean − ½, its SE over deals, and
    the design-effect Wilson interval of a mean in [0, 1] over deals
    (:func:`balance.stats.cluster_mean` with bounds, the toolkit's interval
    for a score) − ½, except where at most :data:`FEW` deals score other
    than ½ (nearly all drawn, say, where the SE is 0): a deal scores at most ½
    above ½, so the gain is at most ½ · P(a deal scores above ½) and at least
    −½ · P(below), and the ends are ½ · the Clopper–Pearson upper bounds of
    those shares. The interval never collapses to a point (coverage:
    ``tests/core/test_equilibrium_gain.py``)."""
    from balance.stats.proportions import _clopper_pearson

    x = np.asarray(x, float)
    d = stats.paired_diff(x - 0.5, alpha)
    n = int(x.size)
    up, down = int((x > 0.5 + 1e-12).sum()), int((x < 0.5 - 1e-12).sum())
    if n and up + down <= FEW:
        hi = 0.5 * float(_clopper_pearson(up, n, alpha)[1])
        lo = -0.5 * float(_clopper_pearson(down, n, alpha)[1])
    else:
        sc = stats.cluster_mean(2.0 * x, np.full(n, 2.0), alpha, bounds=(0.0, 1.0))
        lo, hi = sc["lo"] - 0.5, sc["hi"] - 0.5
    return {"mean": d["mean"], "lo": lo, "hi": hi, "se": d["se"], "n": n}


def plain(v):
    """A number as plain JSON takes it: a finite float, an int, None for NaN
    or infinity; anything else as it is."""
    if isinstance(v, float | np.floating):
        return float(v) if math.isfinite(float(v)) else None
    if isinstance(v, np.integer):
        return int(v)
    return v
