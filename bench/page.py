"""explain --format html's page: its size, the time to write it, and the time it takes to open.

    python bench/page.py [--repeat 7] [--browser /usr/bin/chromium] [--driver /usr/bin/chromedriver]

For each program: the page's size, the median time `autodiff.program.page.build(...).html()`
takes (the program run, explained and drawn), and, in headless Chromium (Debian's chromium and
chromium-driver, driven by Selenium as tests/page does), the median time to interactive: from
the navigation's start to the end of the first frame drawn after the page's script has set it
up (every node focusable, the first input's paths lit, the first step shown), as the page
itself measures it with performance.now(). Target: the tutorial's page under 200 kB; a
1,000-node program's page interactive within 1 s.

- tutorial: examples/tutorial.expr at a=2, b=3, c=5, d=10.
- chain: 1,000 nodes, `x = tanh(x * 0.9 + 0.1)` 333 times from one input.
- shared: about 1,000 nodes, `x = tanh(x * w + b)` 333 times: the inputs w and b are used on every
  line, so in the layered drawing (program/layout.py, graph --format svg's) each use is an edge
  running down through every layer between: the drawing grows with the square of the lines.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time

from autodiff.program.page import build

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROGRAMS = {
    "tutorial": ((ROOT / "examples/tutorial.expr").read_text(), {"a": 2, "b": 3, "c": 5, "d": 10}),
    "chain": ("x = a\n" + "x = tanh(x * 0.9 + 0.1)\n" * 333, {"a": 0.5}),
    "shared": ("x = a\n" + "x = tanh(x * w + b)\n" * 333, {"a": 0.5, "w": 0.9, "b": 0.1}),
}
ARGUMENTS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--window-size=1280,900")
# The end of the first frame after the page is set up: two animation frames after `ready`.
INTERACTIVE = """
var done = arguments[arguments.length - 1];
(function wait() {
  if (document.documentElement.dataset.ready !== 'true') return setTimeout(wait, 5);
  requestAnimationFrame(function () { requestAnimationFrame(function () {
    done([window.autodiffReady, performance.now()]); }); });
})();
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--browser", default="/usr/bin/chromium")
    parser.add_argument("--driver", default="/usr/bin/chromedriver")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    args = parser.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = args.browser
    for argument in ARGUMENTS:
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(args.driver))
    driver.set_script_timeout(60)
    print(f"{'program':10} {'nodes':>6} {'size':>10} {'write (s)':>10} {'ready (ms)':>11} {'interactive (ms)':>17}")
    try:
        with tempfile.TemporaryDirectory() as where:
            for name in args.programs.split(","):
                text, at = PROGRAMS[name]
                writes, page = [], None
                for _ in range(max(1, args.repeat // 3)):
                    start = time.perf_counter()
                    page = build(text, at)
                    document = page.html()
                    writes.append(time.perf_counter() - start)
                path = pathlib.Path(where) / f"{name}.html"
                path.write_text(document, encoding="utf-8")
                ready, interactive = [], []
                for _ in range(args.repeat):
                    driver.get("about:blank")
                    driver.get(path.as_uri())
                    set_up, drawn = driver.execute_async_script(INTERACTIVE)
                    ready.append(set_up)
                    interactive.append(drawn)
                size = len(document.encode("utf-8"))
                print(f"{name:10} {len(page.graph.nodes):>6} {size / 1000:>8.1f}kB {statistics.median(writes):>10.2f} "
                      f"{statistics.median(ready):>11.0f} {statistics.median(interactive):>17.0f}")
                sys.stdout.flush()
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
