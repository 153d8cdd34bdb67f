"""A minimal W3C WebDriver client for headless Chromium through chromedriver (test edge only).

Enough to log in to a web page, open another, type, press keys, resize the window, wait for
text and take a screenshot, without a browser-automation package: chromedriver speaks JSON over
HTTP on loopback. `Driver` is what both engines' clients (Firefox's is `tests/support/bidi.py`)
offer.
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
KEYS = {"Enter": "\ue007", "Tab": "\ue004", "PageUp": "\ue00e", "PageDown": "\ue00f",
        "End": "\ue010", "Home": "\ue011", "ArrowUp": "\ue013", "ArrowDown": "\ue015"}  # fmt: skip
"""WebDriver's code points of the keys the tests press."""


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def key_actions(keys: list[str]) -> list[dict[str, Any]]:
    """WebDriver actions pressing and releasing each key (names of `KEYS` or characters)."""
    actions = []
    for key in keys:
        value = KEYS.get(key, key)
        actions += [{"type": "keyDown", "value": value}, {"type": "keyUp", "value": value}]
    return [{"type": "key", "id": "keyboard", "actions": actions}]


class Driver:
    """What every engine's client offers the tests; waiting and reading built on `script`."""

    name = ""
    downloads: Path | None = None

    def open(self, url: str) -> None:
        """Navigate to `url` and wait for the document to load."""
        raise NotImplementedError

    def script(self, source: str) -> Any:
        """Run a function body in the page and return its value."""
        raise NotImplementedError

    def click(self, css: str) -> None:
        """Click the element matching `css`."""
        raise NotImplementedError

    def keys(self, *keys: str) -> None:
        """Press and release each key in turn, in the focused element."""
        raise NotImplementedError

    def resize(self, width: int, height: int) -> None:
        """Make the viewport `width` x `height` CSS pixels."""
        raise NotImplementedError

    def screenshot(self, path: Path) -> None:
        """Save a PNG screenshot of the viewport."""
        raise NotImplementedError

    def text(self) -> str:
        """The page's visible text (`document.body.innerText`)."""
        return str(self.script("return document.body ? document.body.innerText : '';"))

    def wait_for(self, script: str, timeout: float = 60.0, every: float = 0.05) -> Any:
        """Wait until `script` returns a truthy value (asked every `every` s); return it."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.script(script)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{script!r} stayed falsy; page:\n{self.text()[:2000]}")
            time.sleep(every)

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


class Browser(Driver):
    """One WebDriver session of headless Chromium."""

    name = "chromium"

    def __init__(self, endpoint: str, session: str, downloads: Path | None = None) -> None:
        self.endpoint = endpoint
        self.session = session
        self.downloads = downloads

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

    def keys(self, *keys: str) -> None:
        """Press and release each key in turn, in the focused element."""
        self._call("POST", "/actions", {"actions": key_actions(list(keys))})

    def resize(self, width: int, height: int) -> None:
        """Make the viewport `width` x `height` CSS pixels."""
        self._call("POST", "/window/rect", {"width": width, "height": height})
        inner = self.script("return [innerWidth, innerHeight];")
        self._call(
            "POST",
            "/window/rect",
            {"width": 2 * width - inner[0], "height": 2 * height - inner[1]},
        )

    def screenshot(self, path: Path) -> None:
        """Save a PNG screenshot of the viewport."""
        path.write_bytes(base64.b64decode(self._call("GET", "/screenshot")))

    def label(self, css: str) -> str:
        """The accessible name Chromium computes for the element matching `css`."""
        return str(self._call("GET", f"/element/{self.find(css)}/computedlabel"))


@contextlib.contextmanager
def headless_chromium(
    chromium: str, chromedriver: str, downloads: Path | None = None
) -> Iterator[Browser]:
    """Start chromedriver and a headless Chromium with a fresh profile; stop both after.

    Files the pages download go to `downloads`."""
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
                "prefs": {
                    "download.default_directory": str(downloads or profile),
                    "download.prompt_for_download": False,
                },
            },
        }
        body = json.dumps({"capabilities": {"alwaysMatch": capabilities}}).encode()
        request = urllib.request.Request(
            f"{endpoint}/session", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            session = json.loads(response.read())["value"]["sessionId"]
        browser = Browser(endpoint, session, downloads)
        try:
            yield browser
        finally:
            browser._call("DELETE", "")
    finally:
        driver.terminate()
        driver.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)
