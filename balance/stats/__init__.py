"""Game-agnostic statistics for balance analysis.

Every figure the toolkit reports carries its uncertainty (see
``shared/METHODS.md``). This package holds the estimators and intervals used
throughout; it knows nothing about any particular game. Its names are all
importable from ``balance.stats`` itself; the modules, lowest first (a
module imports only those above it in this list):

* ``normal``: the normal critical value every interval uses.
* ``proportions``: Wilson intervals, a side's win/draw row, seat balance.
* ``pentanomial``: the duplicate-seating (pentanomial) model.
* ``clusters``: deal-level (cluster-robust) rates, means and pooling by deal.
* ``paired``: paired differences between two runs on the same deals.
* ``multiple``: Holm and Benjamini-Hochberg corrections; the interval of an extreme.
* ``luck``: games needed for the stronger side to be ahead.
* ``histograms``: mean, sd, quantiles and a mean's interval from a histogram.
* ``sequential``: the generalized SPRT (Fishtest) and its bounds.
* ``equivalence``: two one-sided tests (TOST).
* ``ratings``: Elo, Bradley-Terry ratings, dominance and intransitive cycles.
* ``nash``: the maximum-entropy Nash equilibrium and Nash averaging.

Conventions
-----------
* Scores are per-game scores in ``[0, 1]``: win = 1, draw = 1/2, loss = 0.
* Duplicate seating plays every deal twice with seats swapped. The outcome of
  one deal for side A is stored as an integer ``0..4``: the number of
  half-points A earned over the two games (0, 0.5, 1, 1.5 or 2 points). The
  five-bin histogram of these is the *pentanomial* count vector, as in
  Fishtest.
* Functions never emit numpy warnings for empty inputs; they return ``nan``.

References
----------
Wilson, E. B. (1927), "Probable inference, the law of succession, and
statistical inference", JASA 22.
Holm, S. (1979), "A simple sequentially rejective multiple test procedure".
Benjamini, Y. & Hochberg, Y. (1995), "Controlling the false discovery rate".
Fishtest ``server/fishtest/stats/`` (pentanomial model, GSPRT).
Wald, A. (1945), "Sequential tests of statistical hypotheses".
Schuirmann, D. J. (1987), two one-sided tests (TOST) for equivalence.
Bradley, R. A. & Terry, M. E. (1952); Ford, L. R. (1957) (existence of the MLE).
Balduzzi, D. et al. (2018), "Re-evaluating evaluation", NeurIPS (Nash averaging).
Browne, C. (2008), "Automatic generation and evaluation of recombination games".
"""

from __future__ import annotations

from balance.stats.clusters import (
    cluster_mean,
    cluster_mean_diff,
    cluster_wilson,
    deal_outcomes,
    deal_values,
    deal_wilson,
    pool_by_deal,
)
from balance.stats.equivalence import tost, tost_paired
from balance.stats.histograms import hist_mean_ci, mean_sd_from_hist, quantile_from_hist
from balance.stats.luck import games_needed
from balance.stats.multiple import bh, extreme_interval, holm
from balance.stats.nash import nash_average, nash_maxent, nash_maxent_many
from balance.stats.paired import paired_diff, paired_diff_from_points
from balance.stats.pentanomial import (
    PAIR_POINTS,
    pentanomial_counts,
    pentanomial_score,
    unpaired_score_se,
    variance_reduction,
)
from balance.stats.proportions import score_wilson, seat_balance, wilson, win_rate_table_row
from balance.stats.ratings import bradley_terry, dominant, elo, elo_interval, three_cycles
from balance.stats.sequential import (
    PAIR_DIFF_VALUES,
    gsprt_llr,
    pair_diff_counts,
    sprt_bounds,
    sprt_pair_diff,
    sprt_pentanomial,
)

#: The old private name, kept because tests/stats/test_stats_methods.py calls
#: ``stats._nash_maxent_many``.
_nash_maxent_many = nash_maxent_many

__all__ = [
    "PAIR_POINTS",
    "wilson",
    "score_wilson",
    "pentanomial_counts",
    "pentanomial_score",
    "unpaired_score_se",
    "variance_reduction",
    "deal_outcomes",
    "deal_values",
    "deal_wilson",
    "cluster_wilson",
    "cluster_mean",
    "cluster_mean_diff",
    "pool_by_deal",
    "paired_diff",
    "paired_diff_from_points",
    "holm",
    "extreme_interval",
    "bh",
    "games_needed",
    "elo",
    "elo_interval",
    "mean_sd_from_hist",
    "quantile_from_hist",
    "win_rate_table_row",
    "gsprt_llr",
    "sprt_bounds",
    "PAIR_DIFF_VALUES",
    "pair_diff_counts",
    "sprt_pair_diff",
    "sprt_pentanomial",
    "tost",
    "tost_paired",
    "bradley_terry",
    "dominant",
    "three_cycles",
    "nash_maxent",
    "nash_average",
    "seat_balance",
    "hist_mean_ci",
]
