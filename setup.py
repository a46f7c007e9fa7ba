"""Build the optional native core (rokuprof/_native/_bsprof).

Everything else is configured in pyproject.toml. The extension is optional: where no C compiler
(or no Python headers) is available, ``pip install .`` still succeeds and rokuprof runs on its
pure-Python decoder, which gives identical results (``rokuprof --version`` says which is active).
"""

from setuptools import Extension, setup

NATIVE = "rokuprof/_native"

setup(
    ext_modules=[
        Extension(
            "rokuprof._native._bsprof",
            sources=[
                f"{NATIVE}/_bsprof.c",
                f"{NATIVE}/bsprof_core.c",
                f"{NATIVE}/bsprof_functions.c",
                f"{NATIVE}/sampler_take.c",
                f"{NATIVE}/samples_text.c",
            ],
            depends=[f"{NATIVE}/{h}.h" for h in ("bsprof_core", "sampler_take", "samples_text")],
            optional=True,
        )
    ]
)
