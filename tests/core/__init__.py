"""The layers every game shares: the engine contract, the fingerprint, the toy
game, the random streams, the metrics, the import layers and the lint."""
