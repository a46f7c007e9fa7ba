"""Allow ``python -m rokuprof``."""

from rokuprof.cli import main

main()
