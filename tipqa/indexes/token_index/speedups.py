"""The compiled speed-ups of the token index's text analysis and phrase counting, when built.

`_speedups.c` holds C versions of the loops that bound the token index in Python: the analysis
of a document for the build (`tantivy_schema.analyse_ascii` for lower-cased ASCII text, and
`tantivy_analysis.prepare_in_python` and `tantivy_schema.prepared_repeats` for any other: the
text tantivy indexes and its `repeats` field) and the phrase counting of a query's matches
(`tantivy_verify.count_ascii`, and in C for UTF-8 text too). `pip install` compiles it where a
C compiler is found (an optional extension); without one, or with `TIPQA_PURE_PYTHON=1` in the
environment, the Python code runs; a built module that cannot be loaded (a broken build)
raises ImportError rather than running slower unnoticed. Both give the same results
(`tests/tipqa/indexes/token_index/test_speedups.py` compares them); only the speed differs.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
from types import ModuleType

PURE_PYTHON = "TIPQA_PURE_PYTHON"
MODULE = f"{__package__}._speedups"


@functools.lru_cache(maxsize=1)
def native() -> ModuleType | None:
    """The compiled module; None when it was not built or `TIPQA_PURE_PYTHON` is set."""
    if os.environ.get(PURE_PYTHON, "") not in ("", "0"):
        return None
    spec = importlib.util.find_spec(MODULE)
    if spec is None:
        return None
    try:
        return importlib.import_module(MODULE)
    except ImportError as exc:
        raise ImportError(
            f"the C speed-ups are built but cannot be loaded ({exc}): rebuild them (install "
            f"tipqa again) or set {PURE_PYTHON}=1 to run the Python code",
            name=MODULE,
            path=spec.origin,
        ) from exc
