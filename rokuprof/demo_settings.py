"""What ``rokuprof demo`` writes its chunks with: one home, light enough for ``rokuprof demo -h``
(which shows the default) without loading the capture."""

from __future__ import annotations

from rokuprof.sentry.settings import ChunkSettings

#: A chunk every 5 s, so a short demo writes several; tagged as the demo's environment.
DEMO_CHUNKS = ChunkSettings(chunk_seconds=5.0, environment="demo")
