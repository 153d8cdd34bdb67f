"""Upload the Hub-ready folder to a Hugging Face dataset repository, sending only what changed.

Each local file is compared with the remote tree (`HfApi.list_repo_tree`): an LFS file by its
SHA-256 (the LFS oid), a regular file by its git blob id. Only new and changed files are
committed, in one commit; data files of the configurations that are no longer in the folder are
deleted in the same commit. A dry run reads the remote tree (read-only) and changes nothing.

The token comes from `HF_TOKEN` or the user's cached login (`huggingface_hub.get_token`); it is
handed to `HfApi` only, and never logged or written.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import read_json, write_json
from tipqa.hub.folder import CONFIGS
from tipqa.hub.settings import HubSettings

log = logging.getLogger(__name__)

CHUNK = 1 << 20


@dataclass(frozen=True)
class LocalFile:
    """A file of the folder with the two hashes the Hub may report for it."""

    path: Path
    size: int
    sha256: str
    git_sha1: str


@dataclass(frozen=True)
class RemoteFile:
    """A file of the remote tree: its git blob id and, for an LFS file, its SHA-256."""

    blob_id: str
    lfs_sha256: str | None = None


def hash_file(path: Path) -> LocalFile:
    """SHA-256 and git blob SHA-1 of a file, read once."""
    size = path.stat().st_size
    sha256 = hashlib.sha256()
    git = hashlib.sha1(f"blob {size}\0".encode())
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            sha256.update(chunk)
            git.update(chunk)
    return LocalFile(path, size, sha256.hexdigest(), git.hexdigest())


def local_files(folder: Path) -> dict[str, LocalFile]:
    """Every file of the folder by its path in the repository."""
    folder = Path(folder)
    return {
        path.relative_to(folder).as_posix(): hash_file(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def folder_digest(files: dict[str, LocalFile]) -> str:
    """One hash of the folder's content: paths and their SHA-256."""
    digest = hashlib.sha256()
    for name, item in sorted(files.items()):
        digest.update(f"{name}\0{item.sha256}\n".encode())
    return digest.hexdigest()


@dataclass
class UploadPlan:
    """What a publish does: files to add (new or changed), to keep, and to delete."""

    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)

    @property
    def upload(self) -> list[str]:
        """The files to send."""
        return sorted([*self.new, *self.changed])

    @property
    def empty(self) -> bool:
        """True when the remote repository already holds the folder."""
        return not (self.new or self.changed or self.delete)


def same_content(local: LocalFile, remote: RemoteFile) -> bool:
    """True when the remote file has the local content."""
    if remote.lfs_sha256:
        return remote.lfs_sha256 == local.sha256
    return remote.blob_id == local.git_sha1


def plan_upload(
    local: dict[str, LocalFile], remote: dict[str, RemoteFile], managed: tuple[str, ...] = CONFIGS
) -> UploadPlan:
    """Compare the folder with the remote tree; stale files under `managed/` are deleted."""
    plan = UploadPlan()
    for name, item in sorted(local.items()):
        if name not in remote:
            plan.new.append(name)
        elif same_content(item, remote[name]):
            plan.unchanged.append(name)
        else:
            plan.changed.append(name)
    prefixes = tuple(f"{folder}/" for folder in managed)
    plan.delete = sorted(n for n in remote if n not in local and n.startswith(prefixes))
    return plan


def remote_files(api: Any, repo_id: str, revision: str) -> dict[str, RemoteFile] | None:
    """The remote tree's files, or None when the repository does not exist (or is hidden)."""
    from huggingface_hub import RepoFile
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        entries = list(
            api.list_repo_tree(repo_id, repo_type="dataset", recursive=True, revision=revision)
        )
    except RepositoryNotFoundError:
        return None
    return {
        e.path: RemoteFile(e.blob_id, e.lfs.sha256 if e.lfs else None)
        for e in entries
        if isinstance(e, RepoFile)
    }


def resolve_token(required: bool) -> str | None:
    """The user's token (`HF_TOKEN` or cached login); a ConfigError when required and absent."""
    from huggingface_hub import get_token

    token = get_token()
    if token is None and required:
        raise ConfigError(
            "no Hugging Face token: set HF_TOKEN or log in with `hf auth login` "
            "(a dry run needs none for a public repository)"
        )
    return token


@dataclass
class PublishResult:
    """What a publish did (or, in a dry run, would do); no secret is held here."""

    repo_id: str
    revision: str
    endpoint: str
    private: bool
    dry_run: bool
    repo_exists: bool
    plan: UploadPlan
    digest: str
    commit_url: str | None = None
    commit_oid: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to the publish record."""
        return {**asdict(self), "plan": {**asdict(self.plan), "upload": self.plan.upload}}


def check_repo_id(repo_id: str) -> None:
    """A repository id is "owner/name"."""
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise ConfigError(f"[hub] repo_id must be 'owner/name', got {repo_id!r}")


def publish_folder(
    folder: Path,
    repo_id: str,
    *,
    private: bool = True,
    dry_run: bool = False,
    endpoint: str | None = None,
    revision: str = "main",
    commit_message: str = "Update dataset (tipqa)",
) -> PublishResult:
    """Create the dataset repository if missing (private by default) and commit what changed."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    check_repo_id(repo_id)
    folder = Path(folder)
    if not (folder / "README.md").is_file():
        raise InputError("not a Hub-ready folder (no README.md)", path=str(folder))
    local = local_files(folder)
    api = HfApi(endpoint=endpoint or None, token=resolve_token(required=not dry_run))
    if not dry_run:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    remote = remote_files(api, repo_id, revision)
    plan = plan_upload(local, remote or {})
    result = PublishResult(
        repo_id,
        revision,
        api.endpoint,
        private,
        dry_run,
        remote is not None,
        plan,
        folder_digest(local),
    )
    _log_plan(result)
    if dry_run or plan.empty:
        return result
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(local[name].path))
        for name in plan.upload
    ]
    operations += [CommitOperationDelete(path_in_repo=name) for name in plan.delete]
    info = api.create_commit(
        repo_id,
        operations,
        commit_message=commit_message,
        repo_type="dataset",
        revision=revision,
    )
    result.commit_url, result.commit_oid = str(info.commit_url), info.oid
    log.info("published %s: %s", repo_id, result.commit_url)
    return result


def _log_plan(result: PublishResult) -> None:
    """Say what will be (or would be) sent; a dry run says it at warning level to be seen."""
    plan = result.plan
    level = logging.WARNING if result.dry_run else logging.INFO
    verb = "would" if result.dry_run else "will"
    where = f"{result.repo_id}" + ("" if result.repo_exists else " (new repository)")
    log.log(
        level,
        "%s: %s upload %d file(s), delete %d, keep %d unchanged",
        where,
        verb,
        len(plan.upload),
        len(plan.delete),
        len(plan.unchanged),
    )
    for name in plan.new:
        log.log(level, "  new      %s", name)
    for name in plan.changed:
        log.log(level, "  changed  %s", name)
    for name in plan.delete:
        log.log(level, "  delete   %s", name)


def record_path(folder: Path, repo_id: str, dry_run: bool) -> Path:
    """Where the record of a publish to `repo_id` goes under `folder`."""
    check_repo_id(repo_id)
    name = repo_id.replace("/", "--")
    return Path(folder) / (f"{name}.dry-run.json" if dry_run else f"{name}.json")


def publish(
    folder: Path, settings: HubSettings, repo_id: str, dry_run: bool, record: Path
) -> PublishResult:
    """Publish `folder` to `repo_id` with the [hub] settings; write the record of what was done."""
    result = publish_folder(
        folder,
        repo_id,
        private=settings.private,
        dry_run=dry_run,
        endpoint=settings.endpoint or None,
        revision=settings.revision or "main",
    )
    write_json(record, result.to_dict())
    return result


def is_published(record: Path, folder: Path, repo_id: str) -> bool:
    """True when `record` says this very folder content was published to `repo_id`."""
    if not Path(record).is_file() or not (Path(folder) / "README.md").is_file():
        return False
    data = read_json(record)
    if not isinstance(data, dict) or data.get("dry_run") or data.get("repo_id") != repo_id:
        return False
    return data.get("digest") == folder_digest(local_files(folder))
