"""Errors that name the place of bad input."""

from __future__ import annotations


class TipqaError(Exception):
    """Base of the errors this package raises on purpose."""

    kind = "configuration or input error"


class InputError(TipqaError):
    """Bad input data: names the file, the line or record, and the field where known."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        where = ", ".join(
            part
            for part in (
                str(path) if path else "",
                f"line {line}" if line is not None else "",
                f"field {field!r}" if field else "",
            )
            if part
        )
        super().__init__(f"{where}: {message}" if where else message)


class ConfigError(TipqaError):
    """A configuration value is unknown or inconsistent."""


class MissingExtraError(TipqaError):
    """An optional dependency is needed but not installed."""

    def __init__(self, package: str, extra: str, needed_by: str = "this backend") -> None:
        super().__init__(f"{needed_by} needs the {package!r} package: pip install 'tipqa[{extra}]'")


class CredentialsError(TipqaError):
    """A server refused the credentials it was given: no retry can succeed."""

    kind = "refused credentials"


class UnreachableError(TipqaError):
    """A second judge's server could not be reached, or has no such model: nothing it was
    asked could be answered, so the step stops before writing anything."""

    kind = "unreachable server"


class UndeterminedError(TipqaError):
    """A build left questions undetermined: the dataset is not finished."""

    kind = "unfinished dataset"

    def __init__(self, count: int, summary: str) -> None:
        super().__init__(
            f"{count} questions are undetermined, so the dataset is not finished ({summary} "
            "says why and how to retry them); to accept it as it is, add --accept-undetermined"
        )
