"""A Label Studio server through its SDK (`label-studio-sdk`, the `labelstudio` extra).

Only the few calls the push and the pull need, each returning plain data and turning every
failure into a `LabelStudioError` that says what was being done, where, and why: a server
that cannot be reached or times out, a token that is refused (401 or 403: a `TokenRefused`,
also a `CredentialsError`, so a run ends with one paragraph and no traceback; with a hint where
the server disabled legacy tokens), any other error answer. The URL comes from
`[labelstudio] url` or `LABEL_STUDIO_URL`; the API token only from the environment variable
named by `api_key_env` (a personal access token, which the SDK refreshes, or a legacy token).
The token is never stored on this object, never put in a message, and the SDK's errors (which
carry response headers) are not chained into ours.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import orjson

from tipqa.core.errors import ConfigError, CredentialsError, MissingExtraError, TipqaError
from tipqa.core.fingerprint import content_hash
from tipqa.core.settings import Settings, knob, setting

URL_ENV = "LABEL_STUDIO_URL"
REPOSITORY = Path(__file__).resolve().parents[2]
T = TypeVar("T")


@dataclass(frozen=True)
class LabelStudioSettings(Settings):
    """[labelstudio]: the Label Studio server, and the projects PushAnnotation makes there."""

    url: str = knob("", doc=f"the server (empty: ${URL_ENV}); any user:password is never shown")
    api_key_env: str = knob(
        "LABEL_STUDIO_API_KEY", doc="the environment variable that holds the API token"
    )
    project_prefix: str = setting(
        "", doc="project titles are `<prefix> <annotator>` (empty: `tipqa <run>/<pool>`)"
    )
    label_config: str = knob(
        "annotation/label-studio.xml", doc="the labelling config (its content is fingerprinted)"
    )
    timeout: float = knob(60.0, doc="seconds to wait for one answer of the server")
    max_retries: int = knob(2, doc="retries of a request that failed to connect or timed out")
    import_batch: int = knob(100, doc="tasks per import request and per page listed")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.timeout <= 0 or self.max_retries < 0 or self.import_batch < 1:
            raise ConfigError(
                "[labelstudio] timeout must be positive, max_retries at least 0 and "
                "import_batch at least 1"
            )

    def identity(self) -> dict[str, Any]:
        """The project prefix and the labelling config's content hash (not its path)."""
        return {**super().identity(), "label_config_sha256": content_hash(self.config_path())}

    def config_path(self) -> Path:
        """The labelling config file; a relative path not found here is tried in the repository."""
        path = Path(self.label_config)
        candidates = [path] if path.is_absolute() else [path, REPOSITORY / path]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        raise ConfigError(f"[labelstudio] label_config: no file {self.label_config!r}")

    def label_config_text(self) -> str:
        """The labelling config a project gets."""
        return self.config_path().read_text("utf-8")

    def server_url(self) -> str:
        """The server's URL (from the settings or the environment), empty when neither has one."""
        return (self.url or os.environ.get(URL_ENV, "")).strip().rstrip("/")


class LabelStudioError(TipqaError):
    """Label Studio could not be reached, refused the token, or answered with an error."""


class TokenRefused(LabelStudioError, CredentialsError):
    """Label Studio answered 401 or 403: the API token is wrong, expired or not allowed."""


@dataclass(frozen=True)
class Project:
    """A Label Studio project, as far as tipqa cares."""

    id: int
    title: str
    description: str


def shown_url(url: str) -> str:
    """The URL without any user:password part, for messages and stats files."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc)).rstrip("/")


def _detail(body: Any) -> str:
    """The human part of an error body (Label Studio's `detail` and `validation_errors`)."""
    if isinstance(body, dict):
        parts = [str(body[key]) for key in ("detail", "validation_errors") if body.get(key)]
        if parts:
            return ": ".join(parts)[:1000]
    return str(body)[:1000]


class LabelStudioServer:
    """One Label Studio server, reached through the SDK with a token from the environment."""

    def __init__(self, settings: LabelStudioSettings) -> None:
        try:
            import httpx
            from label_studio_sdk import LabelStudio
            from label_studio_sdk.core.api_error import ApiError
        except ImportError as exc:
            raise MissingExtraError("label-studio-sdk", "labelstudio") from exc
        url = settings.server_url()
        if not url:
            raise ConfigError(f"no Label Studio URL: set [labelstudio] url or {URL_ENV}")
        if not os.environ.get(settings.api_key_env, "").strip():
            raise ConfigError(
                f"no Label Studio API token: set {settings.api_key_env} (Label Studio: "
                "Account & Settings > Personal Access Token)"
            )
        self.url = url
        self.settings = settings
        self._api_error = ApiError
        self._transport_error = httpx.HTTPError
        self._client: Any = self._call(
            "connecting",
            lambda: LabelStudio(
                base_url=url,
                api_key=os.environ[settings.api_key_env].strip(),
                timeout=settings.timeout,
                max_retries=settings.max_retries,
            ),
        )

    def _call(self, what: str, call: Callable[[], T]) -> T:
        """Run one SDK call; every failure becomes a LabelStudioError saying what and where."""
        where = shown_url(self.url)
        try:
            return call()
        except self._api_error as exc:
            status, detail = exc.status_code, _detail(exc.body)
            if status in (401, 403):
                raise TokenRefused(self._refused(status, what, detail)) from None
            raise LabelStudioError(
                f"Label Studio at {where} answered {status} to {what}: {detail}"
            ) from None
        except self._transport_error as exc:
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise LabelStudioError(
                f"cannot reach Label Studio at {where} ({what}): {reason}; is it running?"
            ) from None

    def _refused(self, status: int, what: str, detail: str) -> str:
        """What to say when the server refused the token: which variable, why, what to do."""
        hint = (
            "use a personal access token (Account & Settings), or enable legacy tokens for the "
            "organization"
            if "legacy token" in detail.lower()
            else "set it to a current personal access token of this server (Account & Settings > "
            "Personal Access Token)"
        )
        return (
            f"Label Studio at {shown_url(self.url)} refused the API token in "
            f"{self.settings.api_key_env} ({what}: {status} {detail.strip().rstrip('.')}); {hint}"
        )

    def check(self) -> str:
        """The email of the token's user (so a wrong URL or token fails before any work)."""
        me = self._call("checking the token", lambda: self._client.users.whoami())
        return str(me.email or me.username or me.id)

    def projects_titled(self, title: str) -> list[Project]:
        """Every project with exactly this title (the server's filter is a substring search)."""
        found: list[Any] = self._call(
            f"listing projects titled {title!r}",
            lambda: list(self._client.projects.list(title=title, page_size=100)),
        )
        return [
            Project(int(p.id), str(p.title or ""), str(p.description or ""))
            for p in found
            if p.title == title
        ]

    def create_project(self, title: str, description: str, label_config: str) -> int:
        """Create a project with our labelling config (no skipping, one annotation a task)."""
        project: Any = self._call(
            f"creating project {title!r}",
            lambda: self._client.projects.create(
                title=title,
                description=description,
                label_config=label_config,
                show_skip_button=False,
                enable_empty_annotation=False,
                maximum_annotations=1,
            ),
        )
        return int(project.id)

    def label_config(self, project: int) -> str:
        """The labelling config a project has now."""
        found = self._call(f"reading project {project}", lambda: self._client.projects.get(project))
        return str(found.label_config or "")

    def set_label_config(self, project: int, label_config: str) -> None:
        """Replace a project's labelling config (the server checks existing annotations)."""
        self._call(
            f"updating the labelling config of project {project}",
            lambda: self._client.projects.update(project, label_config=label_config),
        )

    def task_items(self, project: int) -> list[tuple[int, str | None]]:
        """(task id, our item id or None) of every task of a project."""
        tasks: list[Any] = self._call(
            f"listing the tasks of project {project}",
            lambda: list(
                self._client.tasks.list(
                    project=project, fields="task_only", page_size=self.settings.import_batch
                )
            ),
        )
        return [(int(t.id), (t.data or {}).get("item_id")) for t in tasks]

    def import_tasks(self, project: int, tasks: list[dict[str, Any]]) -> int:
        """Import tasks (`{"data": ...}`) into a project; how many the server created."""
        answer: Any = self._call(
            f"importing {len(tasks)} task(s) into project {project}",
            lambda: self._client.projects.import_tasks(
                project, request=tasks, return_task_ids=True
            ),
        )
        created = getattr(answer, "task_ids", None)  # sent by the server, not in the SDK's model
        if created is not None:
            return len(created)
        return int(answer.task_count or 0)

    def export_json(self, project: int) -> list[Any]:
        """Label Studio's JSON export of a project: every task, with its annotations."""
        data = self._call(
            f"exporting project {project}",
            lambda: b"".join(
                self._client.projects.exports.download_sync(
                    project, export_type="JSON", download_all_tasks=True
                )
            ),
        )
        try:
            tasks = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise LabelStudioError(
                f"the JSON export of project {project} at {shown_url(self.url)} is not JSON: {exc}"
            ) from None
        if not isinstance(tasks, list):
            raise LabelStudioError(f"the JSON export of project {project} is not a list of tasks")
        return tasks

    def project_url(self, project: int) -> str:
        """Where people open the project in a browser."""
        return f"{shown_url(self.url)}/projects/{project}/data"
