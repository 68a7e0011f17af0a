"""Trisk: rules, engine and extras."""
