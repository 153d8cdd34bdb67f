"""A worker process of the parallel tantivy build: `python -m tipqa.token_index.tantivy_worker DIR`.

Reads length-prefixed pickles from stdin: first (heap bytes, tokenization kind, blank
characters), then batches of entries until the end of the input, and writes them as the index
part in DIR (see `tantivy_build`). Exits non-zero with the traceback on stderr on any error.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from tipqa.token_index.tantivy_analysis import Tokenization
from tipqa.token_index.tantivy_build import read_frames, write_part


def main() -> None:
    """Write the part named on the command line from the frames on stdin."""
    frames = read_frames(sys.stdin.buffer)
    heap_bytes, kind, blank = pickle.loads(next(frames))
    write_part(
        Path(sys.argv[1]),
        (pickle.loads(frame) for frame in frames),
        heap_bytes,
        Tokenization(kind, blank),
    )


if __name__ == "__main__":
    main()
