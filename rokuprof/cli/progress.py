"""When a command shows progress: reads of this size, bars only for inputs from this size."""

from __future__ import annotations

READ_SIZE = 1 << 20
SHOW_FROM = 8 << 20  # inputs smaller than this are read too fast to need a bar
