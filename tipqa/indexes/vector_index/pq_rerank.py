"""PQ codes re-ranked exactly: the FAISS structures behind the `pq-rerank` kind.

Every vector is encoded in 4-bit product-quantised codes (FAISS fast scan, `pq_dims`
dimensions per code); a search scans every code for `factor` x k candidates and re-ranks them by
the exact vectors of a flat index, which the codes sit beside rather than replace.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MIN_CODED = 1024
TRAIN_SAMPLE = 65_536
PQ_BITS = 4


def pq_codes(faiss: Any, flat: Any, pq_dims: int) -> Any:
    """4-bit fast-scan PQ codes of every vector of a flat index, trained on an even sample of
    at most `TRAIN_SAMPLE` of them; None below `MIN_CODED` vectors (searched exactly)."""
    count, dimension = flat.ntotal, flat.d
    if count < MIN_CODED:
        return None
    vectors = faiss.rev_swig_ptr(flat.get_xb(), count * dimension).reshape(count, dimension)
    codes = faiss.IndexPQFastScan(dimension, dimension // pq_dims, PQ_BITS, flat.metric_type)
    codes.train(np.ascontiguousarray(vectors[:: max(1, count // TRAIN_SAMPLE)][:TRAIN_SAMPLE]))
    for start in range(0, count, TRAIN_SAMPLE):
        codes.add(vectors[start : start + TRAIN_SAMPLE])
    return codes


def reranked(faiss: Any, codes: Any, flat: Any, factor: int) -> Any:
    """A FAISS index searching `codes` for `factor` x k candidates, re-ranked by `flat`."""
    index = faiss.IndexRefine(codes, flat)
    index.k_factor = float(factor)
    return index
