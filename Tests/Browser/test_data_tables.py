"""Any table of the service in the browser, on `todosync demo` (which seeds `orders` beside the
todos): the `/data/{table}` list, its editor (Save, Delete with confirmation, flash messages), a
conflict on `orders` settled on the conflict page, and the pages at 1280 and 390 px, light and
dark, axe-clean. With JavaScript on and off."""
import os

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from conftest import make_browser
from dashboard import flash_text, header_count, open_page, sync, wait_for
from test_pages import SHOTS, WIDTHS, check
from test_tutorial import cell


def rows(driver, base):
    """The orders list as {id: [cell texts]}."""
    open_page(driver, base + "/data/orders")
    listed = {}
    for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr"):
        key = row.find_element(By.CSS_SELECTOR, "th a").get_attribute("href").rsplit("/", 1)[-1]
        listed[key] = [td.text for td in row.find_elements(By.CSS_SELECTOR, "td")]
    return listed


def edit_field(driver, base, item, column, value):
    open_page(driver, base + "/data/orders/" + item)
    field = driver.find_element(By.NAME, "field:" + column)
    field.clear()
    field.send_keys(value)
    driver.find_element(By.XPATH, "//button[normalize-space()='Save']").click()


def test_the_orders_list_and_editor(demo, browsers):
    a, _ = browsers
    sync(a, demo.a, "/data")
    open_page(a, demo.a + "/data")
    a.find_element(By.CSS_SELECTOR, "a[href='/data/orders']").click()
    wait_for(a, "table tbody tr")
    listed = rows(a, demo.a)
    assert set(listed) >= {"order-1", "order-2", "order-3"}
    assert any("ACME" in text for text in listed["order-1"])
    # Only the paid ones.
    a.find_element(By.XPATH, "//nav[@aria-label='Filter by paid']//a[normalize-space()='Yes']").click()
    wait_for(a, "table tbody tr")
    assert [row.find_element(By.CSS_SELECTOR, "th a").get_attribute("href").rsplit("/", 1)[-1]
            for row in a.find_elements(By.CSS_SELECTOR, "table tbody tr")] == ["order-2"]

    # The editor: one input per column by its type.
    open_page(a, demo.a + "/data/orders")
    a.find_element(By.CSS_SELECTOR, "a[href='/data/orders/order-1']").click()
    assert a.find_element(By.NAME, "field:paid").get_attribute("type") == "checkbox"
    assert a.find_element(By.NAME, "field:total").get_attribute("type") == "number"
    assert a.find_element(By.NAME, "field:due").get_attribute("type") == "datetime-local"
    edit_field(a, demo.a, "order-1", "total", "13")
    assert "Saved total of order-1" in flash_text(a, "Saved total of order-1")
    assert "13" in rows(a, demo.a)["order-1"]
    assert header_count(a, "pending") == 1

    # Delete asks first: a dialog with JavaScript, a page of its own without.
    open_page(a, demo.a + "/data/orders/order-3")
    a.find_element(By.XPATH, "//button[normalize-space()='Delete this row']").click()
    asked = WebDriverWait(a, 10).until(
        lambda driver: expected_conditions.alert_is_present()(driver) or "Delete this row?" in driver.page_source)
    if asked is True:
        a.find_element(By.XPATH, "//button[normalize-space()='Delete the row']").click()
    else:
        asked.accept()
    assert "Deleted order-3 from orders" in flash_text(a, "Deleted order-3")
    assert "order-3" not in rows(a, demo.a)
    assert "Pushed 2" in sync(a, demo.a, "/data")


def test_a_conflict_on_orders_shows_every_column_and_is_settled(demo, browsers):
    a, b = browsers
    sync(a, demo.a, "/data")
    sync(b, demo.b, "/data")
    edit_field(a, demo.a, "order-2", "total", "120")
    flash_text(a, "Saved")
    assert "Pushed 1" in sync(a, demo.a, "/data")
    edit_field(b, demo.b, "order-2", "total", "150")
    flash_text(b, "Saved")
    assert "1 conflict" in sync(b, demo.b, "/data")
    open_page(b, demo.b + "/conflicts")
    b.find_element(By.LINK_TEXT, "Resolve").click()
    wait_for(b, "table.compare")
    assert cell(b, "total", "server").text == "120"
    assert cell(b, "total", "client").text == "150"
    for column in ("customer", "paid", "due", "lines"):
        cell(b, column, "server")
    b.find_element(By.XPATH, "//button[normalize-space()='Use Client']").click()
    assert "Kept your value" in flash_text(b, "Kept your value")
    assert header_count(b, "conflicts") == 0
    sync(a, demo.a, "/data")
    assert "150" in rows(a, demo.a)["order-2"]


def test_a_true_false_value_is_ticked_from_the_list_of_any_table(demo, browsers):
    a, _ = browsers
    sync(a, demo.a, "/data")
    open_page(a, demo.a + "/data/orders")
    row = a.find_element(By.ID, "row-order-1")
    assert "2026-12-01 09:30:00 UTC" in row.text, "a date is readable, on its own"
    row.find_element(By.CSS_SELECTOR, "button.check").click()
    # Without JavaScript the form's answer is a new page, and with it the row is replaced in place:
    # an element found just before may be gone when it is read.
    WebDriverWait(a, 10, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda driver: driver.find_element(By.CSS_SELECTOR, "#row-order-1 button.check").get_attribute("aria-checked")
        == "true")
    WebDriverWait(a, 10, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda driver: "pending update" in driver.find_element(By.ID, "row-order-1").text)
    WebDriverWait(a, 10).until(lambda driver: header_count(driver, "pending") == 1)
    open_page(a, demo.a + "/data/orders/order-1")
    assert a.find_element(By.NAME, "field:paid").is_selected()


@pytest.fixture
def phone():
    driver = make_browser(True)
    yield driver
    driver.quit()


def test_the_data_pages_fit_both_widths_in_both_schemes_and_pass_the_accessibility_check(demo, phone):
    os.makedirs(SHOTS, exist_ok=True)
    sync(phone, demo.b, "/data")
    urls = {
        "data": demo.b + "/data",
        "data-orders": demo.b + "/data/orders",
        "data-order": demo.b + "/data/orders/order-1",
        "data-missing": demo.b + "/data/nope",
    }
    problems = []
    for scheme in ("light", "dark"):
        if scheme == "dark":
            phone.execute_cdp_cmd(
                "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        for width in WIDTHS:
            phone.set_window_size(width, 900)
            for name, url in urls.items():
                problems += check(phone, name, url, width, scheme=scheme)
    assert not problems, "\n".join(problems)
