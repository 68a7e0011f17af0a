"""Clash: rules, engine and extras."""
