"""What the synthetic app does with remote keys (pure data): each key is a few bursts, each a
fixed call path walked some ticks on one thread, and may change the screen.

* ``Up``/``Down``/``Left``/``Right``: ``onKeyEvent`` → ``moveFocus`` on the main thread, and a
  row update (``RowList_update`` → ``RowList_scroll``) on the render thread.
* ``Select`` on the home screen: the details screen opens (``DétailsÉcran_show``) and the
  content loader fetches it (``ContentLoader_run`` → ``loadDetails`` → the JSON parser).
* ``Back`` on the details screen: home again (``showHome``, rows redrawn).
* ``Lit_<c>``: the text handler (``onKeyEvent`` → ``SearchBox_onText``).
* Any other key: a short ``onKeyEvent``.
* :data:`DEEP_LINK` (a launch with parameters, which the app gets as an input event): the
  linked content opens as with ``Select`` (``onInputEvent`` → ``navigate`` → the details).

The key-only functions are never reached by the app's own random walks, so a run without keys
streams exactly what it did before keys existed.
"""

from __future__ import annotations

from rokuprof.simulator.app_model import FUNCTIONS, HOME, LOADER, MAIN, ROW, Burst, Function

HOME_SCREEN, DETAILS_SCREEN = "home", "details"
ARROWS = frozenset({"Up", "Down", "Left", "Right"})
LITERAL = "Lit_"
DEEP_LINK = "<deep link>"  # not an ECP key: what the device hands the app for launch parameters

ON_KEY = ("Main", "eventLoop", "handleMessage", "onKeyEvent")
ROWS = ("HomeScene_onRender", "RowList_update")

#: Functions only a key reaches.
KEY_FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        Function("moveFocus", HOME, 60, allocs=0.5, size=(32, 128)),
        Function("onInputEvent", MAIN, 160, stay=0.5, allocs=1, size=(64, 512)),
        Function("RowList_scroll", ROW, 330, ops_per_us=1.4, calls=3, allocs=1, size=(64, 1024)),
        Function("loadDetails", LOADER, 110, calls=2, allocs=1, size=(1024, 8192)),
        Function("SearchBox_onText", "pkg:/components/SearchBox.brs", 12, allocs=1, size=(16, 96)),
    )
}
#: Every function a walk may name: the app's own and the key-only ones.
ALL_FUNCTIONS: dict[str, Function] = {**FUNCTIONS, **KEY_FUNCTIONS}


#: The content loader fetching the details screen's content.
LOAD = (
    Burst("ContentLoaderTask", ("ContentLoader_run", "loadDetails"), 3),
    Burst(
        "ContentLoaderTask",
        ("ContentLoader_run", "loadDetails", "parseJSON", "parseValue", "parseObject"),
        6,
    ),
)


def key_work(key: str, screen: str) -> tuple[tuple[Burst, ...], str]:
    """The bursts ``key`` causes on ``screen``, and the screen after it."""
    if key in ARROWS:
        return (
            Burst("main", (*ON_KEY, "moveFocus"), 6),
            Burst("HomeScene", (*ROWS, "RowList_scroll"), 4),
        ), screen
    if key == DEEP_LINK or (key == "Select" and screen == HOME_SCREEN):
        handler = "onInputEvent" if key == DEEP_LINK else "onKeyEvent"
        opens = (*ON_KEY[:-1], handler, "navigate", "DétailsÉcran_show")
        return (Burst("main", opens, 5), *LOAD), DETAILS_SCREEN
    if key == "Back" and screen == DETAILS_SCREEN:
        return (
            Burst("main", (*ON_KEY, "navigate", "showHome"), 3),
            Burst("HomeScene", ROWS, 3),
        ), HOME_SCREEN
    if key.startswith(LITERAL):
        return (Burst("main", (*ON_KEY, "SearchBox_onText"), 2),), screen
    return (Burst("main", ON_KEY, 2),), screen
