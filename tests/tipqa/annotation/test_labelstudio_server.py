"""Reaching Label Studio: settings, titles and the errors of a server down, mute or missing.

No Label Studio is needed here (the real one is in test_labelstudio.py): a closed port, a
socket that accepts but never answers and a server that answers 401 stand in for a server that
is down, hangs or refuses the token.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from support.label_studio_server import refusing_server
from support.webdriver import free_port

from tipqa.annotation.labelstudio import default_prefix, project_title
from tipqa.annotation.labelstudio_server import (
    LabelStudioError,
    LabelStudioServer,
    LabelStudioSettings,
    TokenRefused,
    shown_url,
)
from tipqa.annotation.layout import AnnotationLayout
from tipqa.core.errors import ConfigError, CredentialsError
from tipqa.core.settings import parse

TOKEN = "feedfacefeedfacefeedfacefeedface"


@pytest.fixture
def sdk() -> None:
    """Skip without the labelstudio extra."""
    pytest.importorskip("label_studio_sdk", reason="the labelstudio extra is not installed")


@pytest.fixture
def mute_server() -> Iterator[str]:
    """A loopback port that accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_settings_parse_strictly_and_show_no_credentials() -> None:
    raw = {
        "url": "http://me:secret@127.0.0.1:8080/",
        "project_prefix": "tipqa paper",
        "timeout": "5",
    }
    settings = parse(LabelStudioSettings, "labelstudio", raw)
    assert settings.timeout == 5.0 and settings.api_key_env == "LABEL_STUDIO_API_KEY"
    assert settings.server_url() == "http://me:secret@127.0.0.1:8080"
    assert sorted(settings.identity()) == ["label_config_sha256", "project_prefix"]
    assert "secret" not in str(settings.identity())
    with pytest.raises(ConfigError, match="unknown key 'token'"):
        parse(LabelStudioSettings, "labelstudio", {"token": TOKEN})
    with pytest.raises(ConfigError, match="import_batch at least 1"):
        parse(LabelStudioSettings, "labelstudio", {"import_batch": "0"})
    assert shown_url("http://me:secret@127.0.0.1:8080/") == "http://127.0.0.1:8080"
    assert shown_url("https://label.example.org/ls/") == "https://label.example.org/ls"


def test_project_titles_are_stable_and_within_label_studios_limit(tmp_path) -> None:
    layout = AnnotationLayout.of(tmp_path / "outputs" / "paper", "dev")
    assert default_prefix(layout) == "tipqa paper/dev"
    assert project_title("tipqa paper/dev", "annotator-01") == "tipqa paper/dev annotator-01"
    with pytest.raises(ConfigError, match=r"has 56 characters \(Label Studio allows 3 to 50\)"):
        project_title("tipqa " + "x" * 37, "annotator-01")
    assert '<Choices name="relevant"' in LabelStudioSettings().label_config_text()
    with pytest.raises(ConfigError, match=r"label_config: no file 'nowhere\.xml'"):
        LabelStudioSettings(label_config="nowhere.xml").label_config_text()


def test_missing_url_or_token_names_the_setting(sdk, monkeypatch) -> None:
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    monkeypatch.setenv("MY_LS_TOKEN", TOKEN)
    with pytest.raises(ConfigError, match=r"set \[labelstudio\] url or LABEL_STUDIO_URL"):
        LabelStudioServer(LabelStudioSettings(api_key_env="MY_LS_TOKEN"))
    monkeypatch.delenv("MY_LS_TOKEN")
    with pytest.raises(ConfigError, match="no Label Studio API token: set MY_LS_TOKEN"):
        LabelStudioServer(LabelStudioSettings(url="http://127.0.0.1:1", api_key_env="MY_LS_TOKEN"))


def test_a_server_that_is_down_is_a_clear_error(sdk, monkeypatch) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    server = LabelStudioServer(LabelStudioSettings(url=url, max_retries=0))
    with pytest.raises(LabelStudioError) as error:
        server.check()
    message = str(error.value)
    assert message.startswith(f"cannot reach Label Studio at {url} (checking the token): Connect")
    assert message.endswith("is it running?") and TOKEN not in message


def test_a_server_that_never_answers_times_out_clearly(sdk, mute_server, monkeypatch) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    settings = LabelStudioSettings(url=mute_server, timeout=0.5, max_retries=0)
    with pytest.raises(LabelStudioError, match=r"\(listing projects titled 'x y'\): ReadTimeout"):
        LabelStudioServer(settings).projects_titled("x y")


def _personal_token() -> str:
    """A token shaped like a Label Studio personal access token (a JWT refresh token)."""
    import jwt

    claims = {"token_type": "refresh", "exp": int(time.time()) + 3600}
    return jwt.encode(claims, "not-the-key-of-the-label-studio-server", algorithm="HS256")


@pytest.mark.parametrize("kind", ["legacy", "personal"])
def test_a_refused_token_is_a_credentials_error_in_one_sentence(sdk, monkeypatch, kind) -> None:
    token = TOKEN if kind == "legacy" else _personal_token()
    monkeypatch.setenv("MY_LS_TOKEN", token)
    with refusing_server() as url, pytest.raises(TokenRefused) as refused:
        LabelStudioServer(LabelStudioSettings(url=url, api_key_env="MY_LS_TOKEN")).check()
    assert isinstance(refused.value, CredentialsError)
    assert str(refused.value) == (
        f"Label Studio at {url} refused the API token in MY_LS_TOKEN (checking the token: 401 "
        "Invalid token); set it to a current personal access token of this server (Account & "
        "Settings > Personal Access Token)"
    )
    assert refused.value.__cause__ is None and refused.value.__suppress_context__
    assert refused.value.kind == "refused credentials" and token not in str(refused.value)
