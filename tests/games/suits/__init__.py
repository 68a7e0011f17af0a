"""Suits: rules, engine and extras."""
