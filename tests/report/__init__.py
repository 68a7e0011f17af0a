"""Charts, pages, the report pipeline and the browser tests."""
