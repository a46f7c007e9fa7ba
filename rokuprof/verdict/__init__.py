"""Verdicts a lab can trust (pure core): repeated runs compared as distributions, counters
before clocks, each verdict explained in one line.

stats.py (quantiles, the Mann-Whitney U and Kolmogorov-Smirnov tests), series.py (a series of
runs: per function and figure, one value a run), judge.py (regressed, improved, same or unknown
per function and figure), trend.py and leaks.py (live bytes per scenario iteration, and the
leak verdict), summary.py (Markdown and JUnit for CI).
"""
