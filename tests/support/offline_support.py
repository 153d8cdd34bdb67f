"""Run a snippet in a fresh Python with the Hugging Face Hub offline, as a user without network."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def offline_error(snippet: str) -> str:
    """The InputError message `snippet` raises with the Hub offline (it must raise one)."""
    script = (
        "from tipqa.core.errors import InputError\ntry:\n"
        + textwrap.indent(textwrap.dedent(snippet), "    ")
        + "\nexcept InputError as exc:\n    print('ERROR:', exc)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.startswith("ERROR: "), result.stderr
    return result.stdout.removeprefix("ERROR: ")
