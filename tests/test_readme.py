"""The README's configuration reference is what the settings classes say."""

from __future__ import annotations

from pathlib import Path

from tipqa.config_reference import in_readme, reference

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_configuration_reference_is_up_to_date() -> None:
    text = README.read_text()
    assert in_readme(text, reference()) == text, (
        "run: python -m tipqa.config_reference --readme README.md"
    )
