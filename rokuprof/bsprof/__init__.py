"""The ``.bsprof`` format: grammar, incremental decoder, errors (pure core, no I/O)."""

from rokuprof._lazy import lazy_names

# Names load on first use, so a light module below (model, wall_unit, errors) does not load the
# decoder and its grammar: `rokuprof -h` reads the wall units' names from wall_unit.
__getattr__ = lazy_names(
    __name__,
    {
        "Decoder": "decoder",
        **dict.fromkeys(
            (
                "BadHeader",
                "BadMagic",
                "BsprofError",
                "CorruptVarint",
                "DecoderStateError",
                "InvalidValue",
                "LimitExceeded",
                "UnknownEntryType",
            ),
            "errors",
        ),
        **dict.fromkeys(("Entry", "Footer", "Header", "Limits"), "model"),
    },
)

__all__ = [
    "BadHeader",
    "BadMagic",
    "BsprofError",
    "CorruptVarint",
    "Decoder",
    "DecoderStateError",
    "Entry",
    "Footer",
    "Header",
    "InvalidValue",
    "LimitExceeded",
    "Limits",
    "UnknownEntryType",
]
