"""Tosk: rules, engine and extras."""
