"""askkit's compiled kernels (askkit/frame/_kernels.c); everything else is in pyproject.toml.

The extension is optional: without a C compiler the install goes on, and
askkit/frame/kernels.py falls back to pyarrow.compute paths that give the same values.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "askkit.frame._kernels",
            sources=["askkit/frame/_kernels.c"],
            # -ffp-contract=off: no fused multiply-add, so sums match numpy's to the bit
            extra_compile_args=[
                "-O2",
                "-ffp-contract=off",
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
            ],
            optional=True,
        )
    ]
)
