"""The games' homes: one package per game, each declaring ``GAME`` (a
:class:`balance.registry.Game`) and holding the Python-side extras only that
game has (its commands, analyses, charts and page templates). The registry
finds every package here; nothing outside a game's own folder names it."""
