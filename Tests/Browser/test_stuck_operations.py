"""Stuck operations on the queue page: hold a change, edit its item (it stays held), release it and
sync, with JavaScript on and off; the page and the bulk Discard question at both widths, light and
dark, pass the accessibility check."""
import os
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from dashboard import add_todo, edit_todo, flash_text, open_page, sync, todo_texts, wait_for_text
from test_pages import SHOTS, check, scrolls_sideways, serious_violations


def queue_row(driver, text):
    return driver.find_element(By.XPATH, "//tr[td[contains(@class,'todo-text')]/a[normalize-space()='%s']]" % text)


def press(driver, text, button):
    queue_row(driver, text).find_element(By.XPATH, ".//button[normalize-space()='%s']" % button).click()


def test_hold_edit_release_and_sync_from_the_queue_page(demo, browsers):
    _, b = browsers
    text = "Hold me %s" % uuid.uuid4().hex[:6]
    add_todo(b, demo.b, text)
    open_page(b, demo.b + "/operations")
    press(b, text, "Hold")
    assert "Held 1 change" in flash_text(b, "Held")
    row = queue_row(b, text)
    assert row.find_element(By.CSS_SELECTOR, '[data-field="state"]').text == "held"
    assert "not until you release it" in row.find_element(By.CSS_SELECTOR, '[data-field="next-attempt"]').text

    # An edit joins the held change, which stays held; a sync leaves it queued.
    edited = text + " (edited)"
    edit_todo(b, demo.b, text, edited)
    sync(b, demo.b, "/operations")
    open_page(b, demo.b + "/operations")
    rows = b.find_elements(By.CSS_SELECTOR, "table.queue tbody tr")
    assert len(rows) == 1
    assert queue_row(b, edited).find_element(By.CSS_SELECTOR, '[data-field="state"]').text == "held"

    press(b, edited, "Release")
    assert "Released 1 change" in flash_text(b, "Released")
    sync(b, demo.b, "/operations")
    open_page(b, demo.b + "/operations")
    assert "Nothing to push" in b.find_element(By.CSS_SELECTOR, "main").text
    # Device A sees the edited todo once it syncs.
    a, _ = browsers
    sync(a, demo.a)
    assert edited in todo_texts(a, demo.a)


def test_the_queue_with_held_and_selected_changes_fits_and_passes_the_accessibility_check(demo, browser):
    os.makedirs(SHOTS, exist_ok=True)
    for index in range(2):
        add_todo(browser, demo.b, "Queued change number %d with a long text that wraps on a phone" % index)
    open_page(browser, demo.b + "/operations")
    press(browser, "Queued change number 0 with a long text that wraps on a phone", "Hold")
    flash_text(browser, "Held")
    problems = []
    for scheme in ("light", "dark"):
        browser.execute_cdp_cmd(
            "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        for width in (1280, 390):
            browser.set_window_size(width, 900)
            problems += check(browser, "queue-held", demo.b + "/operations", width, scheme=scheme)
    # The bulk form's Discard asks first, on a page of its own.
    open_page(browser, demo.b + "/operations")
    for box in browser.find_elements(By.CSS_SELECTOR, 'input[type="checkbox"][form="bulk"]'):
        box.click()
    Select(browser.find_element(By.ID, "bulk-action")).select_by_value("discard")
    browser.find_element(By.XPATH, "//button[normalize-space()='Apply to selected']").click()
    # The question's page replaces the queue: its old elements go stale while it loads.
    wait_for_text(browser, "main", "Discard these changes?")
    if scrolls_sideways(browser):
        problems.append("the bulk Discard question at 390 px scrolls sideways")
    problems += ["bulk discard: %s" % v for v in serious_violations(browser)]
    browser.find_element(By.XPATH, "//button[normalize-space()='Discard the changes']").click()
    assert "Discarded 2 changes" in flash_text(browser, "Discarded")
    assert not problems, "\n".join(problems)
