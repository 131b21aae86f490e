#!/usr/bin/env python3
"""How soon an open page shows an edit made elsewhere: A edits one todo N times (200 by default,
through `PATCH /api/data/todoitem/{id}`), and B's open todo list, in headless Chromium, marks with
a MutationObserver the moment each new text appears in its DOM. Prints p50, p90, p99 and max of
(B's DOM updated) - (the moment A's request was sent), in milliseconds.

    Benchmarks/live-page-bench.py .build/release/todosync [--edits 200] [--devices]

By default A and B are two pages of one dashboard (the path is the store's change stream and the
page's fragments). With --devices, A is device A and B device B of `todosync demo`, both syncing by
themselves, and each edit on A is followed at once by `POST /api/push` on A; the time then includes
A's push and B hearing of it (the remote's change channel, or B's polling where there is none).
Both clocks are this machine's wall clock (Python's time.time() and the page's
performance.timeOrigin + performance.now()). Run with the release build."""
import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Browser"))
os.environ.setdefault("SE_AVOID_STATS", "true")

from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

import conftest  # noqa: E402

WATCH = """
window.liveSeen = {};
var list = document.getElementById("live-list");
new MutationObserver(function () {
  var now = performance.timeOrigin + performance.now();
  list.querySelectorAll("td.todo-text a").forEach(function (link) {
    var text = link.textContent.trim();
    if (!(text in window.liveSeen)) window.liveSeen[text] = now;
  });
}).observe(list, {subtree: true, childList: true, characterData: true, attributes: true});
"""


class Dashboard:
    """One dashboard's JSON surface, with its CSRF token."""

    def __init__(self, base):
        self.base = base
        self.token = self.call("GET", "/api/status")["csrfToken"]

    def call(self, method, path, body=None):
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        if method != "GET":
            headers["X-CSRF-Token"] = self.token
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
        return json.loads(text) if text else None


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="the todosync binary (the release build)")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--devices", action="store_true", help="A and B are the demo's two devices")
    arguments = parser.parse_args()
    conftest.BIN = os.path.abspath(arguments.binary)

    folder = tempfile.mkdtemp(prefix="todosync-live-bench-")
    launch = conftest.Launch(["demo", "--port", "0", "--data-dir", folder,
                              "--auto-sync", "5" if arguments.devices else "0"])
    urls = launch.wait_for(conftest.demo_addresses, "its three addresses")
    a = Dashboard(urls["device A"])
    b_base = urls["device B"] if arguments.devices else urls["device A"]
    browser = conftest.make_browser(True)
    try:
        added = a.call("POST", "/api/data/todoitem", {"text": "bench 0"})
        item_id = added.get("id") or added.get("item", {}).get("id")
        if arguments.devices:
            a.call("POST", "/api/push")
        browser.get(b_base + "/")
        wait = WebDriverWait(browser, 60, poll_frequency=0.01)
        wait.until(lambda d: d.execute_script("return document.documentElement.dataset.live === 'open'"))
        wait.until(lambda d: "bench 0" in d.page_source)
        browser.execute_script(WATCH)
        latencies = []
        for index in range(1, arguments.edits + 1):
            text = "bench %d" % index
            sent = time.time() * 1000
            a.call("PATCH", "/api/data/todoitem/" + item_id, {"text": text})
            if arguments.devices:
                a.call("POST", "/api/push")
            seen = wait.until(lambda d: d.execute_script("return window.liveSeen[arguments[0]]", text))
            latencies.append(seen - sent)
        print("live page: %d edits on A, B's DOM updated after (ms): p50 %.0f  p90 %.0f  p99 %.0f  max %.0f"
              % (len(latencies), percentile(latencies, .5), percentile(latencies, .9), percentile(latencies, .99),
                 max(latencies)))
    finally:
        browser.quit()
        launch.kill()


if __name__ == "__main__":
    main()
