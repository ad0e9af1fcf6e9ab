"""Headless Chromium for the report tests: DOM dumps, screenshots, and the network requests a page makes.

Requests are observed with the Chrome DevTools Protocol over ``--remote-debugging-pipe`` (JSON messages ending
in NUL on file descriptors 3 and 4), so no websocket client and no open port are needed. Chromium runs as root
with the flags Debian's package needs in a container, its own throw-away profile, and every background service
that could reach the network switched off.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")


def binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable_reason() -> str | None:
    if binary() is None:
        return "chromium is not installed (run `make sysdeps` as root, or apt-get install chromium)"
    return None


def _cmd(profile: Path, *extra: str) -> list[str]:
    return [str(binary()), *FLAGS, f"--user-data-dir={profile}", *extra]


def dump_dom(url: str, profile: Path, timeout_s: float = 60) -> str:
    """The DOM after load, serialised (``--dump-dom``)."""
    p = subprocess.run(_cmd(profile, "--dump-dom", url), capture_output=True, text=True, timeout=timeout_s)
    if p.returncode != 0:
        raise RuntimeError(f"chromium --dump-dom failed ({p.returncode}): {p.stderr[-1000:]}")
    return p.stdout


def screenshot(url: str, out: Path, profile: Path, size: str = "1280,2400", timeout_s: float = 60) -> Path:
    p = subprocess.run(_cmd(profile, f"--screenshot={out}", f"--window-size={size}", url), capture_output=True,
                       text=True, timeout=timeout_s)
    if p.returncode != 0 or not out.is_file():
        raise RuntimeError(f"chromium --screenshot failed ({p.returncode}): {p.stderr[-1000:]}")
    return out


class DevTools:
    """A Chromium driven over ``--remote-debugging-pipe``. Use as a context manager."""

    def __init__(self, profile: Path) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def child_fds() -> None:  # the pipe ends become fds 3 (commands in) and 4 (replies out) of Chromium
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)  # above 4, so the dup2 below never aliases
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(_cmd(profile, "--remote-debugging-pipe", "about:blank"),
                                     preexec_fn=child_fds, close_fds=False, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self._targets: dict[str, str] = {}
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self._to_chrome)
            os.close(self._from_chrome)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        return self._id

    def _next(self, deadline: float) -> dict[str, Any] | None:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._from_chrome], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self._from_chrome, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        if "method" in message:
            self.events.append(message)
        return message

    def wait(self, predicate: Any, timeout_s: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._next(deadline)
            if message is None:
                raise TimeoutError("no matching DevTools message")
            if predicate(message):
                return message

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        i = self.send(method, params, session)
        reply = self.wait(lambda m: m.get("id") == i)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    def drain(self, seconds: float) -> None:
        """Collect events for ``seconds`` (late requests, e.g. lazy images)."""
        deadline = time.monotonic() + seconds
        while self._next(deadline) is not None:
            pass

    def load(self, url: str, settle_s: float = 1.0) -> tuple[str, list[str]]:
        """Open ``url`` in a new tab with network events on; returns the session id and every requested URL (those
        made until ``settle_s`` after the load event: 0 where only the loaded DOM is read)."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self._targets[session] = target
        self.call("Network.enable", {}, session)
        self.call("Page.enable", {}, session)
        self.call("Page.navigate", {"url": url}, session)
        self.wait(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == session)
        self.drain(settle_s)
        requested = [e["params"]["request"]["url"] for e in self.events
                     if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session]
        return session, requested

    def evaluate(self, expression: str, session: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        return result["result"].get("value")

    def screenshot(self, session: str, out: Path, width: int, height: int) -> Path:
        """The tab's page as a ``width`` x ``height`` PNG at ``out`` (what ``--screenshot --window-size`` draws)."""
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
        data = self.call("Page.captureScreenshot", {"format": "png"}, session)["data"]
        out.write_bytes(base64.b64decode(data))
        return out

    def close_tab(self, session: str) -> None:
        """Close the tab :meth:`load` opened (a browser kept for several pages does not pile them up)."""
        self.call("Target.closeTarget", {"targetId": self._targets.pop(session)})

    def dump_dom(self, url: str) -> str:
        """The DOM after load, serialised (what :func:`dump_dom` returns, without a browser start of its own)."""
        session, _ = self.load(url, settle_s=0)
        dom = str(self.evaluate("document.documentElement.outerHTML", session))
        self.close_tab(session)
        return dom

    def screenshot_of(self, url: str, out: Path, size: str = "1280,2400") -> Path:
        """``url`` as a PNG of ``size`` (width,height) at ``out`` (what :func:`screenshot` draws, in a tab)."""
        width, height = (int(v) for v in size.split(","))
        session, _ = self.load(url, settle_s=0)
        self.screenshot(session, out, width, height)
        self.close_tab(session)
        return out


def png_pixels(path: Path, step: int = 8) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct RGB pixels (every ``step``-th row and column) of an 8-bit PNG (stdlib only)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colors: set[bytes] = set()
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, ul = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + left) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + up) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif ftype == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 0xFF
        if y % step == 0:
            colors.update(bytes(line[x:x + 3]) for x in range(0, stride, bpp * step))
        prev = line
    return width, height, colors
