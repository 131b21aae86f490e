"""Revoking a device (docs/fleet.md#revoking-access) against the real binaries, in headless Chromium
with JavaScript on (axe-clean) and off: a dashboard with unsynced todos is revoked with wipe; its next sync hands them to
the service's escrow and empties it, and its banner says so; on `/service/escrow`, signed in with the
admin key, one held change is applied (it reaches the service) and the other discarded; the device's
page shows its revocation and its wipe receipt. Screenshots
go to $TODOSYNC_SCREENSHOTS when set. Every wait polls with a deadline."""
import json
import os
import signal
import tempfile
import time
import urllib.request

import pytest
from selenium.webdriver.common.by import By

from conftest import make_browser, start
from dashboard import add_todo, flash_text, open_page, sync, todo_texts, wait_for
from test_pages import serious_violations

ADMIN_KEY = "revoke-admin-key-5d1c0e77"
DEADLINE = 60


@pytest.fixture(params=[True, False], ids=["js", "nojs"])
def setup(request):
    folder = tempfile.mkdtemp(prefix="todosync-revoke-")
    serve, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite"),
                        "--admin-key", ADMIN_KEY], r"(http://127\.0\.0\.1:\d+)")
    dashboard, base = start(["dashboard", "--port", "0", "--data-dir", os.path.join(folder, "dashboard"),
                             "--remote", url], r"(http://127\.0\.0\.1:\d+)")
    driver = make_browser(javascript=request.param)
    yield url, base, driver, request.param
    driver.quit()
    for process in (dashboard, serve):
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def call(url, method, path, body=None):
    request = urllib.request.Request(
        url + path, method=method, data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": "Bearer " + ADMIN_KEY, "Content-Type": "application/json",
                 "ZUMO-API-VERSION": "2.0.0"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def screenshot(driver, name):
    folder = os.environ.get("TODOSYNC_SCREENSHOTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        driver.save_screenshot(os.path.join(folder, "revoke-%s.png" % name))


def eventually(check, what):
    until = time.monotonic() + DEADLINE
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < until, "%s: not within %d s (last: %r)" % (what, DEADLINE, result)
        time.sleep(0.2)


def test_a_revoked_dashboard_escrows_its_edits_and_the_admin_decides(setup):
    url, base, driver, javascript = setup
    add_todo(driver, base, "synced before")
    assert "Pushed" in sync(driver, base)
    add_todo(driver, base, "offline one")
    add_todo(driver, base, "offline two")
    (device,) = [entry["id"] for entry in call(url, "GET", "/service/api/devices")["devices"]]
    call(url, "POST", "/service/api/devices/%s/revoke" % device, {"wipe": True})

    # The next sync is refused: the dashboard deposits, wipes, and says so.
    open_page(driver, base + "/")
    driver.find_element(By.CSS_SELECTOR, "[data-sync-button]").click()

    def banner():
        open_page(driver, base + "/")
        found = driver.find_elements(By.CSS_SELECTOR, "[data-revoked-banner]")
        return found[0].text if found and "removed from this device" in found[0].text else None
    text = eventually(banner, "the revoked banner")
    assert "2 unsynced changes are kept in the service's escrow" in text, text
    assert todo_texts(driver, base) == []
    screenshot(driver, "1-dashboard")
    # axe runs as a script: with JavaScript on.
    assert not javascript or serious_violations(driver) == []

    # The admin signs in to the service's pages and decides.
    open_page(driver, url + "/service/escrow")
    wait_for(driver, "form input[name=key]").send_keys(ADMIN_KEY)
    driver.find_element(By.CSS_SELECTOR, "form:has(input[name=key]) button").click()
    eventually(lambda: not driver.find_elements(By.CSS_SELECTOR, "input[name=key]"), "the sign-in")
    open_page(driver, url + "/service/escrow")
    rows = driver.find_elements(By.CSS_SELECTOR, "#escrow-entries tbody tr")
    assert len(rows) == 2, driver.page_source[:2000]
    assert "offline one" in driver.find_element(By.ID, "escrow-entries").text
    assert "not seen since" not in driver.find_element(By.ID, "escrow-revocations").text
    assert "todoitem:" in driver.find_element(By.ID, "escrow-receipts").text
    screenshot(driver, "2-escrow")
    assert not javascript or serious_violations(driver) == []
    apply = driver.find_element(By.CSS_SELECTOR, "button[aria-label^='Apply insert']")
    applied_text = "offline one" if "offline one" in apply.find_element(By.XPATH, "./ancestor::tr").text \
        else "offline two"
    apply.click()
    assert "Applied" in flash_text(driver, "Applied")
    driver.find_element(By.CSS_SELECTOR, "button[aria-label^='Discard']").click()
    assert "Discarded" in flash_text(driver, "Discarded")
    assert "Nothing held." in driver.find_element(By.ID, "escrow-entries").text
    screenshot(driver, "3-decided")
    # The device's own page says the same: revoked with wipe, and its receipt.
    open_page(driver, url + "/service/devices/" + device)
    access = driver.find_element(By.ID, "device-access").text
    assert "revoked since" in access and "with wipe" in access and "3 rows removed, 2 changes in escrow" in access, \
        access

    texts = [row["text"] for row in call(url, "GET", "/tables/todoitem")]
    assert sorted(texts) == sorted(["synced before", applied_text]), texts
