"""Headless Chromium for the page's tests: Debian's chromium and chromium-driver, driven by Selenium.

One browser serves the whole session. Where none is installed the browser tests skip, saying how
to install one; in CI (`CI` set, as .ci/run sets it), where the tests run as root on a clean
Debian machine, the browser is installed here first with apt-get, so that the README's two
commands run them; if that fails, they fail rather than skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
PACKAGES = ("chromium", "chromium-driver")  # Debian's names (the executables: chromium, chromedriver)
INSTALL = f"apt-get install {' '.join(PACKAGES)}"
# No background traffic of the browser's own (updates, sync, field trials): the page's requests are all
# the network log holds, and a machine without a network does not slow the start.
ARGUMENTS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--window-size=1280,900",
             "--force-device-scale-factor=1", "--lang=en-US")


def find_browser(path: str | None = None) -> tuple:
    """(the browser, its driver) on `path` (default: PATH), or (None, None)."""
    browser = next((found for name in BROWSERS if (found := shutil.which(name, path=path))), None)
    return browser, shutil.which("chromedriver", path=path)


def _install_in_ci() -> None:
    """apt-get install the browser, once even with several workers (a lock file), as root in CI."""
    import fcntl

    with open("/tmp/autodiff-browser-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(find_browser()):
            return
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *PACKAGES]):
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
            if done.returncode != 0:
                pytest.fail(f"CI needs a browser for the page's tests, and `{' '.join(command)}` failed:\n"
                            f"{done.stderr[-2000:]}")


def _selenium():
    try:
        import selenium  # noqa: F401
    except ImportError:
        return None
    return selenium


def locate_browser(ci: bool, path: str | None = None) -> tuple:
    """(the browser, its driver) on `path` (default: PATH), installed first in CI where they are
    missing; where none can be had, the test skips saying how to install one, or in CI fails."""
    if _selenium() is None:
        if ci:
            pytest.fail("selenium is not installed: pip install -e '.[test]'")
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    binary, driver_path = find_browser(path)
    if not (binary and driver_path) and ci and os.geteuid() == 0 and shutil.which("apt-get", path=path):
        _install_in_ci()
        binary, driver_path = find_browser(path)
    if not (binary and driver_path):
        message = f"no headless Chromium and its driver found (on Debian: {INSTALL})"
        if ci:
            pytest.fail(message)
        pytest.skip(message)
    return binary, driver_path


@pytest.fixture(scope="session")
def browser():
    """A Selenium driver of headless Chromium, with the network log (CDP's Network events) kept."""
    binary, driver_path = locate_browser(ci=bool(os.environ.get("CI")))
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ARGUMENTS:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


class Opened:
    """A page opened in the browser, with what it logged."""

    def __init__(self, driver, url: str) -> None:
        self.driver, self.url = driver, url

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)


def open_page(driver, path) -> Opened:
    """Open a file in the browser and wait until its script has set the page up."""
    driver.get_log("performance")  # what earlier pages logged is not this one's
    driver.get_log("browser")
    url = path.as_uri()
    driver.get(url)
    deadline = time.monotonic() + 30
    while driver.execute_script("return document.documentElement.dataset.ready") != "true":
        if time.monotonic() > deadline:
            raise AssertionError(f"the page never became ready: {driver.get_log('browser')}")
        time.sleep(0.02)
    return Opened(driver, url)
