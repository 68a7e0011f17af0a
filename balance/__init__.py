"""balance: Monte Carlo balance analysis for tabletop card games."""

__version__ = "0.1.0"
