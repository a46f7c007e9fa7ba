"""rokuprof: stream, archive and convert Roku BrightScript profiler data."""

__version__ = "0.1.0"
