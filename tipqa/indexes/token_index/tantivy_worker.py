"""A worker process of the parallel tantivy build, started by `tantivy_build.worker_command`.

The worker is a fresh interpreter given the starting process's `sys.path`, its own package's
folder first, so that it imports the code of the process that started it whatever the working
folder holds (`python -m` would put the working folder first). It reads length-prefixed
pickles from stdin: first (heap bytes, tokenization kind, blank characters), then batches of
entries until the end of the input, and writes them as the index part in the folder it is
given (see `tantivy_build`). It exits non-zero with the traceback on stderr on any error.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from tipqa.indexes.token_index.tantivy_analysis import Tokenization
from tipqa.indexes.token_index.tantivy_build import read_frames, write_part


def main(part: str) -> None:
    """Write the part in folder `part` from the frames on stdin."""
    frames = read_frames(sys.stdin.buffer)
    heap_bytes, kind, blank = pickle.loads(next(frames))
    write_part(
        Path(part),
        (pickle.loads(frame) for frame in frames),
        heap_bytes,
        Tokenization(kind, blank),
    )
