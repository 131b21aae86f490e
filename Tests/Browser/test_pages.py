"""Every page at 1280 and 390 px wide: a screenshot of each under the test output, no sideways
scrolling, and no serious or critical accessibility violation (axe-core); the list and the
conflict page also in dark mode."""
import os

import pytest
from axe_selenium_python import Axe
from selenium.webdriver.common.by import By

from dashboard import add_todo, open_page, sync, wait_for
from test_tutorial import make_conflict

OUTPUT = os.environ.get("TEST_OUTPUT") or os.path.join(os.path.dirname(__file__), "..", "..", ".build", "test-output")
SHOTS = os.path.join(OUTPUT, "screenshots")
WIDTHS = (1280, 390)


def pages(demo, a, b):
    """Every page of device B, by name, with a conflict, a queued change and a long todo list."""
    _, _, conflict = make_conflict(demo, a, b)
    for index in range(3):
        add_todo(b, demo.b, "A rather long todo text number %d that has to wrap on a narrow phone screen" % index)
    open_page(b, demo.b + "/")
    item = b.find_element(By.CSS_SELECTOR, "td.todo-text a").get_attribute("href")
    open_page(b, demo.b + "/operations")
    discard = b.find_element(By.LINK_TEXT, "Discard…").get_attribute("href")
    return {
        "list": demo.b + "/",
        "search": demo.b + "/?q=long+todo",
        "item": item,
        "queue": demo.b + "/operations",
        "discard": discard,
        "conflicts": demo.b + "/conflicts",
        "conflict": conflict,
        "settings": demo.b + "/settings",
        "journal": demo.b + "/journal",
        "log": demo.b + "/log",
        "error": demo.b + "/items/no-such-todo",
    }


def scrolls_sideways(driver):
    return driver.execute_script(
        "return document.documentElement.scrollWidth > document.documentElement.clientWidth")


def serious_violations(driver):
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    return [
        "%s (%s): %s" % (violation["id"], violation["impact"], [node["target"] for node in violation["nodes"]][:3])
        for violation in results["violations"] if violation["impact"] in ("serious", "critical")
    ]


def check(driver, name, url, width, scheme="light"):
    driver.get(url)
    wait_for(driver, "main")
    path = os.path.join(SHOTS, "%s-%d%s.png" % (name, width, "" if scheme == "light" else "-dark"))
    driver.save_screenshot(path)
    problems = []
    if scrolls_sideways(driver):
        problems.append("%s at %d px scrolls sideways" % (name, width))
    problems += ["%s at %d px (%s): %s" % (name, width, scheme, v) for v in serious_violations(driver)]
    return problems


def test_every_page_fits_both_widths_and_passes_the_accessibility_check(demo, pair):
    a, b = pair
    os.makedirs(SHOTS, exist_ok=True)
    urls = pages(demo, a, b)
    problems = []
    for width in WIDTHS:
        b.set_window_size(width, 900)
        # The window's inner width is what the page sees; set_window_size includes the frame.
        for name, url in urls.items():
            problems += check(b, name, url, width)
    b.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    for width in WIDTHS:
        b.set_window_size(width, 900)
        for name in ("list", "conflict", "queue"):
            problems += check(b, name, urls[name], width, scheme="dark")
    assert not problems, "\n".join(problems)


def test_the_conflict_becomes_one_card_per_field_on_a_phone(demo, pair):
    a, b = pair
    _, _, conflict = make_conflict(demo, a, b)
    b.set_window_size(390, 900)
    b.get(conflict)
    row = b.find_element(By.XPATH, "//table[contains(@class,'compare')]//tr[th[normalize-space()='text']]")
    cells = row.find_elements(By.CSS_SELECTOR, "td")
    tops = [cell.location["y"] for cell in cells]
    assert tops == sorted(tops) and len(set(tops)) == 3, "base, client and server are stacked"
    assert all(cell.is_displayed() for cell in cells)
    assert not scrolls_sideways(b)
