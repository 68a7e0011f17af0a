"""The store and the runner."""
