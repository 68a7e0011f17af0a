"""One folder per game: its rules, engine and extras."""
