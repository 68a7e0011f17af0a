"""A toy fifth game, "High Card", registered only by a test
(``tests/core/test_toy_game.py``): it proves a new game needs no file in
``balance/`` outside its own home. Nothing here is compiled; the engine is
plain numpy, played through the same contract as the four real games."""
