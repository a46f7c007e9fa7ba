"""The synthetic Café TV model: the built-in app of a simulator with nothing sideloaded, of the
benchmarks and of the committed samples (its functions and threads are in :mod:`.app_model`, its
keys in :mod:`.app_keys`). It is not any real app's source: a sideloaded app runs a model read
from its own code (:mod:`.app_from_source`)."""

from __future__ import annotations

from rokuprof.simulator.app_keys import ALL_FUNCTIONS, HOME_SCREEN, key_work
from rokuprof.simulator.app_model import FUNCTIONS, THREADS, AppModel

CAFE_TV = AppModel(
    name="synthetic Café TV model",
    functions=FUNCTIONS,
    threads=THREADS,
    key_work=key_work,
    all_functions=ALL_FUNCTIONS,
    home_screen=HOME_SCREEN,
    render_thread="HomeScene",
)
