"""A real box with its web pages, and a real browser to look at them: for the web tests, the
screenshots script and bench/web.py.

`WebBox` runs `timekeeper run --web` in a subprocess (SDL's dummy audio, no GPIO, its own
state folder and ctl socket); `browser()` is Debian's headless Chromium driven by Selenium
through Debian's chromedriver (never a downloaded browser)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from helpers import free_port, wait_for

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def have_browser() -> bool:
    return os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)


class WebBox:
    def __init__(
        self, profile: str = "hokejbal", state_dir: Path | None = None, extra: tuple[str, ...] = ()
    ) -> None:
        self._own = state_dir is None
        self.folder = Path(tempfile.mkdtemp(prefix="tk-web-")) if state_dir is None else state_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.control = self.folder / "control.sock"
        env = os.environ | {
            "SDL_AUDIODRIVER": "dummy",
            "GPIOZERO_PIN_FACTORY": "mock",
            "TIMEKEEPER_PROFILES_PATH": "",
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("TIMEKEEPER_CONFIG", None)
        self.log = open(self.folder / "run.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "timekeeper",
                "run",
                "--profile",
                profile,
                "--no-gpio",
                "--no-keyboard",
                "--fresh",
                "--control",
                str(self.control),
                "--state-dir",
                str(self.folder / "state"),
                "--web",
                str(self.port),
                *extra,
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        try:
            self._wait_ready()
        except BaseException:  # (a box that did not start in time is ended, not left behind)
            self.close()
            raise
        self.token = (self.folder / "state" / "web-token").read_text().strip()

    def _wait_ready(self, timeout: float = 60.0) -> None:
        def ready() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"timekeeper run ended: {self.run_log()}")
            try:
                self.status()
            except OSError:
                return False
            return self.control.exists()

        try:
            wait_for(ready, "timekeeper run to answer", timeout)
        except AssertionError:
            raise RuntimeError(f"timekeeper run did not start: {self.run_log()}") from None

    def run_log(self) -> str:
        return (self.folder / "run.log").read_text()

    def link(self) -> str:
        return f"{self.url}/control#token={self.token}"

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, dict]:
        req = urllib.request.Request(
            self.url + path, data=body, method=method, headers=headers or {}
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def status(self) -> dict:
        return self.request("GET", "/api/status")[1]

    def command(self, name: str, *args: str, token: str | None = "") -> tuple[int, dict]:
        token = self.token if token == "" else token
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        body = json.dumps({"command": name, "args": list(args)}).encode()
        return self.request("POST", "/api/command", body, headers)

    def pause_process(self) -> None:  # the box stops answering (as if hung or cut off)
        self.proc.send_signal(signal.SIGSTOP)

    def continue_process(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def wait_text(self, driver, text: str, timeout: float = 10.0) -> None:
        wait_for(
            lambda: text in driver.find_element("tag name", "body").text,
            f"{text!r} on the page",
            timeout,
        )

    def close(self) -> None:
        if self.proc.poll() is None:
            self.continue_process()
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if self._own:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> WebBox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Chromium:
    """One headless Chromium with its chromedriver, lent out again and again: starting one
    costs seconds (more on a busy machine), so each process keeps the ones it started (one
    per xdist worker, two while a test holds two pages) and quits them at exit. Between
    loans it is wiped: every window but the first closed, an open dialog dismissed, the
    storage and cookies of each origin it visited cleared, the emulated screen reset."""

    idle: ClassVar[list[_Chromium]] = []

    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="tk-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--disable-dev-shm-usage",
            "--disable-extensions",
            "--mute-audio",
            f"--user-data-dir={self.profile}",
            "--window-size=1920,1080",
        ):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.first = self.driver.current_window_handle
        self.origins: set[str] = set()
        atexit.register(self.quit)

    @classmethod
    def lend(cls) -> _Chromium:
        return cls.idle.pop() if cls.idle else cls()

    def give_back(self) -> None:
        """Wiped and kept for the next loan; one that cannot be wiped is quit."""
        from selenium.common.exceptions import NoAlertPresentException, WebDriverException

        driver = self.driver
        try:
            for handle in driver.window_handles:
                if handle != self.first:
                    driver.switch_to.window(handle)
                    driver.close()
            driver.switch_to.window(self.first)
            with contextlib.suppress(NoAlertPresentException):
                driver.switch_to.alert.dismiss()
            driver.get("about:blank")
            for origin in self.origins:
                driver.execute_cdp_cmd(
                    "Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"}
                )
            self.origins.clear()
            driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
            driver.execute_cdp_cmd("Network.clearBrowserCache", {})
            driver.execute_cdp_cmd("Emulation.setDefaultBackgroundColorOverride", {})
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        except WebDriverException:
            self.quit()
            return
        self.idle.append(self)

    def quit(self) -> None:
        with contextlib.suppress(Exception):
            self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)


# noted on every page before its own scripts run: what its Content-Security-Policy refused
_VIOLATIONS = (
    "window.tkViolations = []; document.addEventListener('securitypolicyviolation', "
    "(e) => window.tkViolations.push(`${e.violatedDirective} ${e.blockedURI}`));"
)
LOADED = (
    "return performance.getEntriesByType('resource')"
    ".map((e) => new URL(e.name).pathname)"
)  # the files a page loaded


@contextlib.contextmanager
def csp_watched(driver) -> Iterator[None]:
    """Every page `driver` loads meanwhile notes what its CSP refused in
    `window.tkViolations` (a script or a style the page could not use)."""
    added = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _VIOLATIONS})
    try:
        yield
    finally:
        driver.execute_cdp_cmd(
            "Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]}
        )


@contextlib.contextmanager
def browser(width: int, height: int, height_of_page: bool = False) -> Iterator:
    """Headless Chromium showing a viewport of width × height (`height_of_page`: grown to the
    page's height before a screenshot is taken); a fresh one to the page, if not to the OS
    (see _Chromium)."""
    sys.audit("webbox.browser", width, height)  # (a test that borrows one is `slow`: conftest)
    chromium = _Chromium.lend()
    driver = chromium.driver
    visit = driver.get

    def size(h: int) -> None:  # the page's own viewport, exactly (a window has borders)
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": h, "deviceScaleFactor": 1, "mobile": False},
        )

    def get(url: str) -> None:  # (each origin visited: its storage is wiped afterwards)
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("http", "https"):
            chromium.origins.add(f"{parts.scheme}://{parts.netloc}")
        visit(url)
        if height_of_page:
            size(max(height, settled_height()))

    def settled_height() -> int:
        """The page's height once it is drawn: its fonts loaded and the same height read
        three times in a row (a page draws when its first status arrives)."""
        seen: list[int] = []

        def settled() -> bool:
            seen.append(
                int(
                    driver.execute_script(
                        "return document.fonts.status === 'loaded' && "
                        "document.readyState === 'complete' ? "
                        "document.documentElement.scrollHeight : -1"
                    )
                )
            )
            return len(seen) >= 3 and seen[-1] > 0 and len(set(seen[-3:])) == 1

        wait_for(settled, "the page's height to settle", 15, interval=0.1)
        return seen[-1]

    try:
        size(height)
        driver.get = get
        yield driver
    finally:
        del driver.get  # (the instance's own: the class's method again)
        chromium.give_back()


def drawn(driver, condition: str) -> None:
    """Wait until the page has its data (`condition`, in JavaScript) and its fonts."""
    wait_for(
        lambda: driver.execute_script(
            f"return document.fonts.status === 'loaded' && ({condition})"
        ),
        condition,
        10,
    )
