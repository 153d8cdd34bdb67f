"""A real vLLM OpenAI-compatible server for the rehearsal, and a counting proxy in front of it.

The server is vLLM's own (`python -m vllm.entrypoints.openai.api_server`; the CPU build's
`vllm serve` entry point does not start), in its own process group so that a kill takes its
engine processes too. The proxy forwards every request unchanged and counts, per prompt (the
request body's hash), the answers it relayed: a prompt answered twice was asked twice for an
answer already given.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

HEALTH_TIMEOUT = 600.0


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def vllm_environment(root: Path) -> dict[str, str]:
    """The CPU build's environment: a 1 GiB KV cache, its temporary files under `root`.

    Its IPC sockets go to a short folder of the system's temporary one: a socket's path may
    not pass 107 characters, which a test's temporary folder easily does.
    """
    env = {"VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1"}
    env["VLLM_RPC_BASE_PATH"] = tempfile.mkdtemp(prefix="tipqa-vllm-rpc-", dir="/tmp")
    for variable, folder in (
        ("TMPDIR", "tmp"),
        ("VLLM_CACHE_ROOT", "cache"),
        ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
    ):
        (root / folder).mkdir(parents=True, exist_ok=True)
        env[variable] = str(root / folder)
    return env


class VLLMServer:
    """vLLM's OpenAI-compatible server on loopback, started, killed and started again."""

    def __init__(self, model: Path, name: str, log: Path, env: dict[str, str], context: int):
        self.model, self.name, self.log, self.env, self.context = model, name, log, env, context
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.start_seconds: list[float] = []

    @property
    def url(self) -> str:
        """The server's root URL."""
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The server's command line (as docs/scale.md gives it, on one CPU)."""
        return [
            sys.executable,
            *("-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model)),
            *("--served-model-name", self.name, "--host", "127.0.0.1", "--port", str(self.port)),
            *("--max-model-len", str(self.context), "--enforce-eager", "--dtype", "float32"),
            *("--seed", "0", "--enable-prefix-caching"),
        ]

    def start(self) -> None:
        """Start the server and wait until it is healthy."""
        began = time.monotonic()
        with open(self.log, "ab") as handle:
            self.process = subprocess.Popen(
                self.command(),
                env={**os.environ, **self.env},
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = began + HEALTH_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the vLLM server exited ({self.process.returncode}): {self.log}"
                )
            if self._healthy():
                self.starts += 1
                self.start_seconds.append(round(time.monotonic() - began, 1))
                return
            time.sleep(0.5)
        self.kill()
        raise RuntimeError(f"the vLLM server was not healthy after {HEALTH_TIMEOUT:.0f} s")

    def _healthy(self) -> bool:
        """Whether the server answers its health check."""
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL the server's process group (its engine too) and reap it."""
        if self.process is None:
            return
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None


class CountingProxy:
    """Forwards requests to `upstream`, counting answers per prompt; 502 while it is down.

    A judge request is one with constrained choice. Each callback of `on_judge_request` is
    called with n when the n-th judge request arrives, before it is forwarded, so a callback
    that kills the server does so with that request (and any others) in flight.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.answered: Counter[str] = Counter()
        self.received = 0
        self.failed = 0
        self.judge_requests = 0
        self.judge_answers = 0
        self.on_judge_request: list[Callable[[int], None]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                proxy._forward(self, body)

            def log_message(self, *args: Any) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The proxy's /v1 URL, for [judge] and [keywords] base_url."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def in_flight(self) -> int:
        """Requests received and not yet answered or failed."""
        with self._lock:
            return self.received - sum(self.answered.values()) - self.failed

    def _forward(self, handler: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        judge = b'"structured_outputs"' in body and b'"choice"' in body
        with self._lock:
            self.received += 1
            self.judge_requests += judge
            count = self.judge_requests
        if judge:
            for callback in self.on_judge_request:
                callback(count)
        request = urllib.request.Request(
            self.upstream + handler.path,
            data=body,
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                status, data = reply.status, reply.read()
        except urllib.error.HTTPError as error:
            status, data = error.code, error.read()
        except OSError:
            status, data = 502, b'{"error": {"message": "the vLLM server is down"}}'
        if status == 200:
            with self._lock:
                self.answered[hashlib.sha256(body).hexdigest()] += 1
                self.judge_answers += judge
        else:
            with self._lock:
                self.failed += 1
        with suppress(OSError):
            handler.send_response(status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)

    def asked_twice(self) -> int:
        """Prompts answered more than once (an answer given, then asked for again)."""
        return sum(1 for count in self.answered.values() if count > 1)
