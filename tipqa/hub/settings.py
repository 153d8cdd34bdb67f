"""[hub]: the Hub-ready folder's card, and where PublishDataset uploads it."""

from __future__ import annotations

from dataclasses import dataclass

from tipqa.core.errors import ConfigError
from tipqa.core.settings import Settings, knob, setting


@dataclass(frozen=True)
class HubSettings(Settings):
    """[hub]: what the dataset card says, how the folder is cut, and where it is published.

    The card's fields, `rows_per_file` and `explorer` decide the folder's content; the
    publishing keys (`repo_id`, `private`, `endpoint`, `revision`) decide only where it goes.
    """

    pretty_name: str = setting("", doc="the card's title")
    language: str = setting("en", doc="the card's language code")
    license: str = setting("", doc="the card's license id (empty: none)")
    rows_per_file: int = setting(100_000, doc="rows per Parquet file")
    explorer: bool = setting(False, doc="put the explorer page in the folder (`explorer/`)")
    repo_id: str = knob("", doc="owner/name of the dataset repository")
    private: bool = knob(True, doc="create the repository private")
    endpoint: str = knob("", doc="Hub URL (default: HF_ENDPOINT or the Hub)")
    revision: str = knob("main", doc="the branch to publish to")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rows_per_file < 1:
            raise ConfigError(f"[hub] rows_per_file must be at least 1, got {self.rows_per_file}")

    def card(self) -> dict[str, str]:
        """The card's fields (see `tipqa.hub.card`)."""
        return {
            "repo_id": self.repo_id,
            "pretty_name": self.pretty_name,
            "language": self.language,
            "license": self.license,
        }
