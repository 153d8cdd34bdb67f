"""A minimal WebDriver BiDi client for headless Firefox ESR (test edge only).

Firefox speaks WebDriver BiDi itself on a websocket (`--remote-debugging-port`), so no
geckodriver is needed: the client starts Debian's `firefox-esr` with a fresh profile, opens a
session and offers what the explorer's tests use of `tests/support/webdriver.py`'s Chromium client:
open, script, click, keys, resize, screenshot. Files the pages download go to `downloads`.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from support.webdriver import Driver, free_port, key_actions

PREFERENCES = {
    "browser.download.dir": "{downloads}",
    "browser.download.folderList": 2,
    "browser.download.useDownloadDir": True,
    "browser.download.always_ask_before_handling_new_types": False,
    "browser.download.alwaysOpenPanel": False,
    "browser.shell.checkDefaultBrowser": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.disabledForTesting": True,
}


class BidiError(RuntimeError):
    """A command the browser answered with an error."""


def plain(remote: dict[str, Any]) -> Any:
    """A BiDi remote value as plain Python (arrays, objects, numbers, strings, null)."""
    kind = remote.get("type")
    if kind in ("undefined", "null"):
        return None
    if kind == "array":
        return [plain(v) for v in remote.get("value", [])]
    if kind == "object":
        return {k if isinstance(k, str) else plain(k): plain(v) for k, v in remote["value"]}
    if kind == "number" and isinstance(remote["value"], str):
        return float(remote["value"].replace("Infinity", "inf"))
    return remote.get("value", remote)


class FirefoxBrowser(Driver):
    """One BiDi session of headless Firefox: one browsing context, driven command by command."""

    name = "firefox"

    def __init__(self, socket: ClientConnection, downloads: Path | None) -> None:
        self.socket = socket
        self.downloads = downloads
        self.ids = itertools.count(1)
        self.context = ""

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one command and wait for its answer (events in between are dropped)."""
        number = next(self.ids)
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=120))
            if message.get("id") == number:
                if message.get("type") == "error":
                    raise BidiError(f"{method}: {message.get('error')}: {message.get('message')}")
                return dict(message["result"])

    def open(self, url: str) -> None:
        """Navigate to `url` and wait for the document to load."""
        self.call(
            "browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"}
        )

    def script(self, source: str) -> Any:
        """Run a function body in the page and return its value."""
        result = self.call(
            "script.callFunction",
            {
                "functionDeclaration": f"function () {{ {source} }}",
                "target": {"context": self.context},
                "awaitPromise": False,
            },
        )
        if result.get("type") == "exception":
            raise BidiError(str(result["exceptionDetails"].get("text")))
        return plain(result["result"])

    def click(self, css: str) -> None:
        """Click the middle of the element matching `css`, as a pointer does."""
        found = self.call(
            "script.callFunction",
            {
                "functionDeclaration": "function (css) { var e = document.querySelector(css);"
                " e.scrollIntoView({block: 'center'}); return e; }",
                "arguments": [{"type": "string", "value": css}],
                "target": {"context": self.context},
                "awaitPromise": False,
            },
        )
        element = {"sharedId": found["result"]["sharedId"]}
        pointer = [
            {
                "type": "pointerMove",
                "x": 0,
                "y": 0,
                "origin": {"type": "element", "element": element},
            },
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0},
        ]
        actions = [{"type": "pointer", "id": "mouse", "actions": pointer}]
        self.call("input.performActions", {"context": self.context, "actions": actions})

    def keys(self, *keys: str) -> None:
        """Press and release each key in turn, in the focused element."""
        actions = key_actions(list(keys))
        self.call("input.performActions", {"context": self.context, "actions": actions})

    def resize(self, width: int, height: int) -> None:
        """Make the viewport `width` x `height` CSS pixels."""
        viewport = {"width": width, "height": height}
        self.call("browsingContext.setViewport", {"context": self.context, "viewport": viewport})

    def screenshot(self, path: Path) -> None:
        """Save a PNG screenshot of the viewport (Firefox paints no scrollbars in it)."""
        shot = self.call("browsingContext.captureScreenshot", {"context": self.context})
        path.write_bytes(base64.b64decode(shot["data"]))


@contextlib.contextmanager
def headless_firefox(firefox: str, downloads: Path | None = None) -> Iterator[FirefoxBrowser]:
    """Start a headless Firefox with a fresh profile and a BiDi session; stop it after."""
    port = free_port()
    profile = Path(tempfile.mkdtemp(prefix="tipqa-firefox-"))
    lines = []
    for name, value in PREFERENCES.items():
        if value == "{downloads}":
            value = str(downloads or profile)
        lines.append(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n")
    (profile / "user.js").write_text("".join(lines))
    process = subprocess.Popen(
        [firefox, "--headless", "--no-remote", "--profile", str(profile),
         f"--remote-debugging-port={port}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket = connect(f"ws://127.0.0.1:{port}/session", max_size=None)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        with socket:
            browser = FirefoxBrowser(socket, downloads)
            browser.call("session.new", {"capabilities": {}})
            # a tab of the session's own: the first one never gets the focus in headless mode
            browser.context = browser.call("browsingContext.create", {"type": "tab"})["context"]
            try:
                yield browser
            finally:
                browser.call("session.end", {})
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)
