"""Numba helpers shared by the engines (``sims/``) and the strategies
(``strategies/``): the project's numba flags (``jit``), the counter-based RNG
(``rng``), the merging of per-game outcomes into counts (``aggregate``) and the
score-trace bookkeeping (``trace``). They sit below both, so imports run one
way: ``sims`` → ``strategies`` → ``kernels``."""
