"""The second judges: `[judge.confirm]` (confirms the build judge's yes answers) and
`[audit.judge]` (the judge audit's judge).

Each takes the keys of `[judge]`, with any backend. A key it does not set is inherited from
`[judge]` when the backend it judges with has that key: with the same backend, every key of
`[judge]`'s backend is inherited (write only what differs, say `model`); with another backend,
only the keys the two backends share (`prompt`, `mode`, `model`, ...), never one the chosen
backend lacks. `backend` itself is inherited too. The window keys of `[judge]` (`max_words`,
`max_windows`) are not a second judge's: it judges the units the build cut. An unknown key or
backend is a ConfigError naming the section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tipqa.config.pools import selected
from tipqa.core.errors import ConfigError
from tipqa.core.settings import Settings
from tipqa.llm.judges.base import JUDGES
from tipqa.stages.judging import CONFIRM_SECTION
from tipqa.stages.windows import WindowStepSettings

CONFIRM_JUDGE = CONFIRM_SECTION
AUDIT_JUDGE = "audit.judge"
SECOND_JUDGES: dict[str, str] = {
    CONFIRM_JUDGE: "asks again every yes of the build's judge; evidence needs its yes too",
    AUDIT_JUDGE: "the judge audit's judge, re-judging a sample of the build's judgments",
}
"""The second-judge sections, with what each judge does."""
JUDGE_SECTION, DEFAULT_JUDGE, SELECTOR = "judge", "rules", "backend"


def read_second_judge(
    section: str, sections: Mapping[str, Mapping[str, Any]]
) -> tuple[str, Settings] | None:
    """The backend and settings of a second-judge `section` (None when it is absent)."""
    if section not in sections:
        return None
    own, base = sections[section], sections.get(JUDGE_SECTION, {})
    backend = selected(
        own, SELECTOR, selected(base, SELECTOR, DEFAULT_JUDGE, JUDGE_SECTION), section
    )
    if backend not in JUDGES.names:
        raise ConfigError(
            f"[{section}] backend = {backend!r} is no relevance judge; known: "
            f"{', '.join(JUDGES.names)}"
        )
    for key in own:
        if key in WindowStepSettings.field_names():
            raise ConfigError(
                f"[{section}] {key!r} is a key of [{JUDGE_SECTION}] only: a second judge judges "
                "the windows the build cut"
            )
    keys = set(JUDGES.settings_class(backend).field_names())
    inherited = {key: value for key, value in base.items() if key in keys}
    values = {**inherited, **own}
    ignore = {SELECTOR}
    try:
        settings = JUDGES.parse(backend, section, values, ignore=ignore)
    except ConfigError as error:
        raise _inherited(
            JUDGES.misplaced(error, backend, section, own, ignore),
            section,
            set(inherited) - set(own),
        ) from None
    return backend, settings


def _inherited(error: ConfigError, section: str, inherited: set[str]) -> ConfigError:
    """`error`, saying so when the value it names was inherited from [judge]."""
    key = str(error).removeprefix(f"[{section}] ").split(" ", 1)[0]
    if str(error).startswith(f"[{section}] ") and key in inherited:
        return ConfigError(f"{error} (inherited from [{JUDGE_SECTION}]: set {key} in [{section}])")
    return error
