"""A minimal W3C WebDriver client for headless Chromium through chromedriver (test edge only).

Enough to log in to a web page, open another, wait for text and take a screenshot, without a
browser-automation package: chromedriver speaks JSON over HTTP on loopback.
"""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1280,1400",
]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Browser:
    """One WebDriver session of headless Chromium."""

    def __init__(self, endpoint: str, session: str) -> None:
        self.endpoint = endpoint
        self.session = session

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.endpoint}/session/{self.session}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"webdriver {method} {path}: {exc.read()[:500]!r}") from exc

    def open(self, url: str) -> None:
        """Navigate to `url` and wait for the document to load."""
        self._call("POST", "/url", {"url": url})

    def find(self, css: str) -> str:
        """The element id of the first element matching a CSS selector."""
        return str(self._call("POST", "/element", {"using": "css selector", "value": css})[ELEMENT])

    def type(self, css: str, text: str) -> None:
        """Type `text` into the element matching `css`."""
        self._call("POST", f"/element/{self.find(css)}/value", {"text": text})

    def click(self, css: str) -> None:
        """Click the element matching `css`."""
        self._call("POST", f"/element/{self.find(css)}/click", {})

    def script(self, source: str) -> Any:
        """Run JavaScript in the page and return its value."""
        return self._call("POST", "/execute/sync", {"script": source, "args": []})

    def text(self) -> str:
        """The page's visible text (`document.body.innerText`)."""
        return str(self.script("return document.body ? document.body.innerText : '';"))

    def wait_for_text(self, needle: str, timeout: float = 90.0) -> str:
        """Wait until `needle` is in the page's visible text; return that text."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            if needle in text:
                return text
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{needle!r} not on the page after {timeout} s:\n{text[:2000]}"
                )
            time.sleep(0.5)

    def wait_for(self, script: str, timeout: float = 30.0, every: float = 0.2) -> Any:
        """Wait until `script` returns a truthy value (asked every `every` s); return it."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.script(script)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{script!r} stayed falsy; page:\n{self.text()[:2000]}")
            time.sleep(every)

    def screenshot(self, path: Path) -> None:
        """Save a PNG screenshot of the viewport."""
        path.write_bytes(base64.b64decode(self._call("GET", "/screenshot")))


@contextlib.contextmanager
def headless_chromium(chromium: str, chromedriver: str) -> Iterator[Browser]:
    """Start chromedriver and a headless Chromium with a fresh profile; stop both after."""
    port = free_port()
    profile = tempfile.mkdtemp(prefix="tipqa-chromium-")
    driver = subprocess.Popen(
        [chromedriver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/status", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        capabilities = {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"],
            },
        }
        body = json.dumps({"capabilities": {"alwaysMatch": capabilities}}).encode()
        request = urllib.request.Request(
            f"{endpoint}/session", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            session = json.loads(response.read())["value"]["sessionId"]
        browser = Browser(endpoint, session)
        try:
            yield browser
        finally:
            browser._call("DELETE", "")
    finally:
        driver.terminate()
        driver.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)
