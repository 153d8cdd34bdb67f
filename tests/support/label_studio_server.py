"""A real Label Studio on loopback for the `labelstudio` tests, started from its own venv.

It binds 127.0.0.1 only (`--internal-host`; Label Studio's default is 0.0.0.0, and `--host`
is only the URL put in the links it makes, ignored unless it starts with http:// or https://).
`listening_addresses` reads the kernel's socket tables to check that; `refusing_server` stands
in for a server that refuses every token with a 401.

Label Studio (Django and many packages) stays out of the project's venv: the tests find it
through `TIPQA_LABEL_STUDIO_VENV` (a venv with `pip install label-studio`, as `.ci/labelstudio.sh`
makes) and are skipped with that reason when it is absent. The server gets a fresh data folder,
an admin user and, like a user would, a personal access token (made with a bootstrap legacy
token); version checks, analytics and Sentry reports are switched off so that it needs no
network. It is stopped (its whole process group) after the session.
"""

from __future__ import annotations

import http.server
import ipaddress
import os
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from support.webdriver import free_port

VENV_ENV = "TIPQA_LABEL_STUDIO_VENV"
START_TIMEOUT = 600.0
EMAIL = "organiser@example.com"
PASSWORD = "tipqa-test-password"
LEGACY_TOKEN = "5e1f0c2a9d8b47e6a3c1f0e2d4b6a8c9"
OFFLINE = {
    "LATEST_VERSION_CHECK": "false",
    "COLLECT_ANALYTICS": "false",
    "SENTRY_DSN": "",
    "FRONTEND_SENTRY_DSN": "",
}


@dataclass
class LabelStudio:
    """A running Label Studio: where it is, who may log in, and a personal access token."""

    url: str
    email: str
    password: str
    token: str
    start_seconds: float
    log: Path


def executable() -> Path | None:
    """The `label-studio` command of the venv named by TIPQA_LABEL_STUDIO_VENV, if any."""
    venv = os.environ.get(VENV_ENV, "").strip()
    path = Path(venv) / "bin" / "label-studio"
    return path if venv and path.exists() else None


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
            return b"UP" in response.read()
    except OSError:
        return False


def start(command: Path, data: Path) -> tuple[subprocess.Popen[bytes], LabelStudio]:
    """Start Label Studio on a free loopback port and wait until /health says UP."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = data / "label-studio.log"
    data.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **OFFLINE, "LABEL_STUDIO_BASE_DATA_DIR": str(data)}
    env.pop("LABEL_STUDIO_API_KEY", None)
    started = time.monotonic()
    with open(log, "wb") as handle:
        process = subprocess.Popen(
            [
                str(command),
                "start",
                "--no-browser",
                "--internal-host",
                "127.0.0.1",
                "--port",
                str(port),
                "--username",
                EMAIL,
                "--password",
                PASSWORD,
                "--user-token",
                LEGACY_TOKEN,
                "--enable-legacy-api-token",
            ],
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    while not _up(url):
        if process.poll() is not None or time.monotonic() - started > START_TIMEOUT:
            stop(process)
            tail = log.read_text("utf-8", "replace")[-3000:]
            raise RuntimeError(f"Label Studio did not start at {url}:\n{tail}")
        time.sleep(1)
    seconds = time.monotonic() - started
    return process, LabelStudio(url, EMAIL, PASSWORD, personal_token(url), seconds, log)


def personal_token(url: str) -> str:
    """A personal access token of the admin (what a user copies from Account & Settings)."""
    from label_studio_sdk import LabelStudio as Client

    return str(Client(base_url=url, api_key=LEGACY_TOKEN).tokens.create().token)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and every process it started."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def _address(hex_address: str) -> str:
    """An address of /proc/net/tcp{,6} (32-bit words in the host's byte order, little-endian)."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the TCP sockets listening on `port` (Linux: /proc/net/tcp{,6})."""
    found = set()
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            local, state = fields[1], fields[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(_address(address))
    return found


class _Refuse(http.server.BaseHTTPRequestHandler):
    """Answer every request as Label Studio answers a bad token."""

    def _refuse(self) -> None:
        body = b'{"detail": "Invalid token."}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = _refuse

    def log_message(self, format: str, *args: object) -> None:
        """Keep the test output quiet."""


@contextmanager
def refusing_server() -> Iterator[str]:
    """The URL of a loopback server that answers 401 to everything, like a refused token."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
