"""The default study: every registered game's study plan, one report.

For each game, ``configs/<game>/study.toml`` names the variants, strategies,
games per strategy pair, seed and the card-value run. The study runs (or
reads from the store) every match, writes the tables (Parquet and CSV) and
charts (SVG and PNG) under ``<out>/<game>/``, and a page a person can open,
``<out>/index.html``.
"""

from __future__ import annotations

import math
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from balance import __version__, analysis, charts, report
from balance.config import load_study
from balance.registry import GAMES, get_game
from balance.rulings import rulings
from balance.store import config_hash


def _scaled(n: int, scale: float) -> int:
    n = max(2, int(math.ceil(n * scale)))
    return n + n % 2


def _p_text(p) -> str:
    text = report.fmt_p(p)
    return f"p{text}" if text.startswith("<") else f"p={text}"


def verdicts(game_title: str, t: dict[str, pd.DataFrame]) -> list[str]:
    """Plain-language verdicts from a study's tables, each with its CI and n."""
    out = []
    st = t["strategies"]
    base = st[st["variant"] == "base"].sort_values("winrate", ascending=False)
    if len(base):
        r = base.iloc[0]
        w = base.iloc[-1]
        out.append(
            f"{game_title}, base rules: the strongest scripted strategy is {r.strategy}, "
            f"winning {report.fmt_pct_ci(r.winrate, r.winrate_lo, r.winrate_hi, r.games)} of its "
            f"games; the weakest is {w.strategy} at "
            f"{report.fmt_pct_ci(w.winrate, w.winrate_lo, w.winrate_hi, w.games)}.")
    vt = t["variants"]
    b = vt[vt["variant"] == "base"]
    if len(b) and b.iloc[0].best_strategy:
        r = b.iloc[0]
        need = r.games_needed
        out.append(
            f"Luck vs skill (base): the strongest strategy, {r.best_strategy}, beats random "
            f"{report.fmt_pct_ci(r.luck_skill_winrate, r.luck_skill_lo, r.luck_skill_hi)}; "
            + (f"it needs {int(need):,} game{'s' if need != 1 else ''} to be ahead with 95% "
               "probability."
               if not pd.isna(need) else "it is not reliably ahead at any game count."))
    d = t["diffs"]
    sig = d[d["significant"]].copy()
    if len(sig):
        sig["abs"] = sig["diff"].abs()
        for r in sig.sort_values("abs", ascending=False).head(5).itertuples():
            verb = "raises" if r.diff > 0 else "lowers"
            size, lo, hi = ((r.diff, r.diff_lo, r.diff_hi) if r.diff > 0
                            else (-r.diff, -r.diff_hi, -r.diff_lo))
            out.append(
                f"{r.variant} {verb} {r.strategy}'s score by {100 * size:.1f} points "
                f"[{100 * lo:.1f}, {100 * hi:.1f}] (n={r.n_pairs:,} seat-swapped deal pairs, "
                f"paired with base on the same deals), significant after Holm "
                f"({_p_text(r.p_holm)}).")
        out.append(f"{len(sig)} of {len(d)} variant-by-strategy differences from base are "
                   "significant after Holm.")
    elif len(d):
        out.append(f"No variant changes any strategy's score significantly after Holm "
                   f"({len(d)} comparisons).")
    if len(vt):
        lo = vt.loc[vt["rounds_mean"].idxmin()]
        hi = vt.loc[vt["rounds_mean"].idxmax()]
        out.append(f"Games last {lo.rounds_mean:.1f} rounds on average under {lo.variant} and "
                   f"{hi.rounds_mean:.1f} under {hi.variant}.")
        dr = vt.loc[vt["draw_rate"].idxmax()]
        out.append(f"Draws (round cap): at most "
                   f"{report.fmt_pct_ci(dr.draw_rate, dr.draw_lo, dr.draw_hi, dr.games)} "
                   f"(under {dr.variant}); draws are counted apart, never as wins.")
    return out


def study_game(game: str, out: Path, scale: float, threads, results) -> dict:
    """Run one game's study plan; returns the page's dict for that game."""
    g = get_game(game)
    plan = load_study(game)
    t0 = time.perf_counter()
    # --scale multiplies the games: the CIs narrow by its square root
    n = _scaled(int(plan["pilot_games"]), scale)
    precision = float(plan["precision"]) / math.sqrt(scale)
    variants = plan["variants"] if isinstance(plan["variants"], str) else ",".join(plan["variants"])
    t, vnames, snames, runs = analysis.compare_command(
        game, variants, ",".join(plan["strategies"]), n, int(plan["seed"]), threads, 1 << 15,
        results, precision=precision,
        max_games=_scaled(int(plan["max_games_per_pair"]), scale))
    n_cards = _scaled(int(plan.get("cards_games", 20000)), scale)
    cards = analysis.cards_command(game, "base", plan["cards_strategy"], plan["cards_opponent"],
                                   n_cards, int(plan["seed"]), threads, 1 << 15, results)
    t["cards"] = cards["by_card"]
    t["restricted"] = cards["restricted"]
    elapsed = time.perf_counter() - t0
    folder = out / game
    (folder / "tables").mkdir(parents=True, exist_ok=True)
    for name, df in t.items():
        df.to_csv(folder / "tables" / f"{name}.csv", index=False)
        df.to_parquet(folder / "tables" / f"{name}.parquet", index=False)
    svgs = charts.all_charts(t, folder / "charts", matrix_variants=vnames)
    games_total = sum(r.games for r in runs.values()) + n_cards * (1 + len(cards["restricted"]))
    manifest = {
        "command": " ".join(shlex.quote(a) for a in ["balance", *sys.argv[1:]]),
        "seed": int(plan["seed"]),
        "config_hash": config_hash({"plan": plan, "scale": scale,
                                    "runs": sorted(r.key for r in runs.values())}),
        "engine_version": f"{g.engine} {g.engine_module().VERSION} (toolkit {__version__})",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "games_total": games_total,
        "elapsed_s": round(elapsed, 1),
        "rulings": list(rulings(g.rulings)),
        "variants": vnames,
        "strategies": snames,
        "precision": precision,
        "games_per_pair": f"{min(r.games for r in runs.values()):,}–"
                          f"{max(r.games for r in runs.values()):,}",
    }
    return {"name": g.title, "tables": t, "charts": svgs, "manifest": manifest,
            "summary": verdicts(g.title, t)}


def run_study(out: Path, scale: float = 1.0, threads=None, results=None) -> Path:
    """Run every game's default study and write ``<out>/index.html``."""
    out = Path(out)
    pages = [study_game(name, out, scale, threads, results) for name in GAMES]
    return report.write_index(out, pages)
