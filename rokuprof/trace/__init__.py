"""Perfetto app traces (Roku OS 15.1+), pure: the packets as they arrive (framing.py), a trace
read into tracks, slices and flows (reader.py, model.py), and Roku's analyses of it
(analysis.py). Nothing here does I/O."""
