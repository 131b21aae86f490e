"""Auto-sync as a person sees it: an edit reaches the service without pressing Sync, and the header
says when the next sync is; with JavaScript on and off."""
import json
import os
import signal
import tempfile
import time
import urllib.request

import pytest
from selenium.webdriver.common.by import By

from conftest import make_browser, start
from dashboard import add_todo, open_page


@pytest.fixture
def setup():
    folder = tempfile.mkdtemp(prefix="todosync-autosync-")
    serve, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite")],
                       r"(http://127\.0\.0\.1:\d+)")
    dashboard, base = start(["dashboard", "--port", "0", "--data-dir", os.path.join(folder, "dashboard"),
                             "--remote", url, "--auto-sync", "3600"], r"(http://127\.0\.0\.1:\d+)")
    yield url, base
    for process in (dashboard, serve):
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def service_texts(url):
    request = urllib.request.Request(url + "/tables/todoitem", headers={"ZUMO-API-VERSION": "2.0.0"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return [row["text"] for row in json.load(answer)]


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "nojs"])
def test_an_edit_reaches_the_service_without_pressing_sync(setup, javascript):
    url, base = setup
    driver = make_browser(javascript)
    try:
        add_todo(driver, base, "synced by itself")
        deadline = time.time() + 30
        while "synced by itself" not in service_texts(url):
            assert time.time() < deadline, "auto-sync did not push the new todo"
            time.sleep(0.2)
        # The push has landed; the sync it belongs to (a pull follows) may still run for a moment,
        # and while it runs the header says so instead of when the next one is.
        deadline = time.time() + 30
        while True:
            open_page(driver, base + "/")
            label = driver.find_element(By.CSS_SELECTOR, "[data-field=autoSyncLabel]").text
            if label.startswith("next sync in "):
                break
            assert time.time() < deadline, "the header never said when the next sync is: %r" % label
            time.sleep(0.2)
        assert driver.find_element(By.CSS_SELECTOR, "[data-field=pending]").text == "0"
        open_page(driver, base + "/settings")
        assert driver.find_element(By.ID, "autoSync").get_attribute("value") == "3600"
    finally:
        driver.quit()
