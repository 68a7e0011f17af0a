"""``python -m balance.cli``."""

from balance.cli.root import main

main()
