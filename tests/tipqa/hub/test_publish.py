"""Publishing to the Hub, against a local server that stands in for the Hub API."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path

import huggingface_hub.constants as hf_constants
import pytest
from huggingface_hub.errors import HfHubHTTPError
from support.fake_hub import FakeHub
from support.partition_fixtures import build_splits

from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json
from tipqa.core.steps import Step
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.publish import (
    LocalFile,
    RemoteFile,
    hash_file,
    is_published,
    plan_upload,
    publish,
    publish_folder,
    record_path,
)
from tipqa.hub.settings import HubSettings

# huggingface_hub's LFS upload passes raw bytes as `data=`, which httpx2 deprecates
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

TOKEN = "hf_tipqaFAKEtoken0123456789SECRETvalue"
REPO = "someone/tip-demo"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    """A fake Hub, a recognisable fake token in HF_TOKEN, no cached login, Xet off."""
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(hf_constants, "HF_TOKEN_PATH", str(tmp_path / "no-login" / "token"))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    with FakeHub(TOKEN) as server:
        yield server


def make_folder(root: Path, **kwargs) -> Path:
    run = build_splits(root, **kwargs)
    build_hub_folder(run, HubSettings(repo_id=REPO), StepRecord(Step.HUB_FOLDER, {}))
    return root / "hub"


def local_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.*")}


def test_hashes_are_those_git_and_lfs_use(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "hello").write_bytes(b"hello\n")
    assert hash_file(tmp_path / "empty").git_sha1 == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    hello = hash_file(tmp_path / "hello")
    assert hello.git_sha1 == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert hello.sha256 == hashlib.sha256(b"hello\n").hexdigest() and hello.size == 6


def test_plan_compares_lfs_and_regular_files() -> None:
    local = {
        "README.md": LocalFile(Path("r"), 1, "s-readme", "g-readme"),
        "questions/test-00000-of-00001.parquet": LocalFile(Path("q"), 1, "s-q", "g-q"),
        "instances/test-00000-of-00001.parquet": LocalFile(Path("i"), 1, "s-i2", "g-i2"),
        "questions/train-00000-of-00001.parquet": LocalFile(Path("t"), 1, "s-t", "g-t"),
    }
    remote = {
        ".gitattributes": RemoteFile("g-attr"),
        "README.md": RemoteFile("g-readme"),
        "questions/test-00000-of-00001.parquet": RemoteFile("pointer", "s-q"),
        "instances/test-00000-of-00001.parquet": RemoteFile("pointer", "s-i1"),
        "instances/old-00000-of-00001.parquet": RemoteFile("pointer", "s-o"),
        "notes.txt": RemoteFile("g-notes"),
    }
    plan = plan_upload(local, remote)
    assert plan.unchanged == ["README.md", "questions/test-00000-of-00001.parquet"]
    assert plan.changed == ["instances/test-00000-of-00001.parquet"]
    assert plan.new == ["questions/train-00000-of-00001.parquet"]
    assert plan.delete == ["instances/old-00000-of-00001.parquet"]
    assert not plan.empty


def test_first_publish_creates_a_private_repo_and_uploads_all(hub: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    result = publish_folder(folder, REPO, endpoint=hub.url)
    files = local_bytes(folder)
    assert result.plan.new == sorted(files) and result.commit_oid
    assert hub.repos[REPO].private is True
    stored = hub.repos[REPO].files
    assert {name: stored[name].content for name in files} == files
    assert all(stored[n].lfs == n.endswith(".parquet") for n in files)
    puts = hub.calls("PUT", r"^/lfs-upload/")
    assert len(puts) == sum(n.endswith(".parquet") for n in files) == 6
    assert len(hub.commits(REPO)) == 1
    assert all(r.authorization == f"Bearer {TOKEN}" for r in hub.requests if r.method != "PUT")


def test_public_when_asked(hub: FakeHub, tmp_path: Path) -> None:
    publish_folder(make_folder(tmp_path), REPO, endpoint=hub.url, private=False)
    assert hub.repos[REPO].private is False


def test_republish_sends_only_what_changed(hub: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "a", seed=0)
    publish_folder(folder, REPO, endpoint=hub.url)
    requests = len(hub.requests)

    again = publish_folder(folder, REPO, endpoint=hub.url)
    assert again.plan.empty and again.commit_oid is None
    assert len(hub.commits(REPO)) == 1
    later = [r.path for r in hub.requests[requests:]]
    assert not any("/commit/" in p or "/preupload/" in p or "lfs" in p for p in later)

    reseeded = make_folder(tmp_path / "b", seed=5)
    result = publish_folder(reseeded, REPO, endpoint=hub.url)
    assert "questions/test-00000-of-00001.parquet" in result.plan.unchanged
    assert "questions/validation-00000-of-00001.parquet" in result.plan.changed
    assert "README.md" in result.plan.changed
    committed = {op["value"]["path"] for op in hub.commits(REPO)[-1]["operations"]}
    assert committed == set(result.plan.upload)
    assert "questions/test-00000-of-00001.parquet" not in committed
    assert local_bytes(reseeded) == {
        n: hub.repos[REPO].files[n].content for n in local_bytes(reseeded)
    }

    test_only = make_folder(tmp_path / "c", train=False)
    result = publish_folder(test_only, REPO, endpoint=hub.url)
    assert "questions/train-00000-of-00001.parquet" in result.plan.delete
    remaining = set(hub.repos[REPO].files)
    assert remaining == {".gitattributes", *local_bytes(test_only)}


def test_dry_run_changes_nothing(
    hub: FakeHub, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = make_folder(tmp_path)
    with caplog.at_level(logging.WARNING, logger="tipqa.hub.publish"):
        result = publish_folder(folder, REPO, endpoint=hub.url, dry_run=True)
    assert result.repo_exists is False and result.plan.new == sorted(local_bytes(folder))
    assert REPO not in hub.repos
    assert not hub.calls("POST", r"/api/repos/create|/commit/")
    assert "would upload 10 file(s)" in caplog.text
    assert "new      questions/test-00000-of-00001.parquet" in caplog.text

    publish_folder(folder, REPO, endpoint=hub.url)
    changed = make_folder(tmp_path / "b", seed=9)
    result = publish_folder(changed, REPO, endpoint=hub.url, dry_run=True)
    assert result.repo_exists and "README.md" in result.plan.changed
    assert len(hub.commits(REPO)) == 1


def test_the_token_is_never_logged_or_written(
    hub: FakeHub,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hf_constants, "HF_DEBUG", True)
    folder = make_folder(tmp_path)
    record = tmp_path / "publish" / "record.json"
    with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, "huggingface_hub"):
        publish(folder, HubSettings(endpoint=hub.url), REPO, False, record)
        publish(folder, HubSettings(endpoint=hub.url), REPO, True, record)
    assert any(r.authorization == f"Bearer {TOKEN}" for r in hub.requests)
    assert "Send: curl" in caplog.text
    captured = capsys.readouterr()
    assert TOKEN not in caplog.text + captured.out + captured.err
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_without_a_token_only_a_dry_run_runs(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    folder = make_folder(tmp_path)
    with pytest.raises(ConfigError, match="HF_TOKEN"):
        publish_folder(folder, REPO, endpoint=hub.url)
    result = publish_folder(folder, REPO, endpoint=hub.url, dry_run=True)
    assert not result.repo_exists
    assert all(r.authorization is None for r in hub.requests)


def test_a_rejected_token_fails_without_showing_it(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "hf_tipqaWRONGtoken9876543210"
    monkeypatch.setenv("HF_TOKEN", wrong)
    with pytest.raises(HfHubHTTPError) as failure:
        publish_folder(make_folder(tmp_path), REPO, endpoint=hub.url)
    assert "401" in str(failure.value) and wrong not in str(failure.value)
    assert REPO not in hub.repos


def test_the_record_tells_whether_this_folder_is_published(hub: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "a")
    record = record_path(tmp_path / "publish", REPO, dry_run=False)
    assert record.name == "someone--tip-demo.json"
    assert not is_published(record, folder, REPO)
    publish(folder, HubSettings(endpoint=hub.url), REPO, False, record)
    data = read_json(record)
    assert data["repo_id"] == REPO and data["private"] is True and data["commit_url"]
    assert data["plan"]["upload"] == sorted(local_bytes(folder))
    assert is_published(record, folder, REPO)
    assert not is_published(record, folder, "someone/other")
    (folder / "README.md").write_text("---\npretty_name: changed\n---\n")
    assert not is_published(record, folder, REPO)
    dry = record_path(tmp_path / "publish", REPO, dry_run=True)
    publish(folder, HubSettings(endpoint=hub.url), REPO, True, dry)
    assert dry.name.endswith(".dry-run.json") and not is_published(dry, folder, REPO)


@pytest.mark.parametrize("repo_id", ["", "name-only", "a/b/c", "/name"])
def test_repository_ids_are_checked(tmp_path: Path, repo_id: str) -> None:
    with pytest.raises(ConfigError, match="owner/name"):
        record_path(tmp_path, repo_id, dry_run=False)
