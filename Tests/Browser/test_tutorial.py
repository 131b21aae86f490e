"""The 2015 tutorial's two-phone conflict, in two browsers on `todosync demo`: add a todo on A,
sync both, edit it differently on A and B, sync A then B → B has a conflict, settled with
Use Client, Use Server or Cancel. Runs with JavaScript on and off."""
import uuid

from selenium.webdriver.common.by import By

from dashboard import (wait_for, add_todo, edit_todo, flash_text, header_count, open_page, sync, todo_texts)


def make_conflict(demo, a, b):
    """Returns (A's text, B's text, conflict page URL) after the tutorial's steps."""
    tag = uuid.uuid4().hex[:6]
    original, text_a, text_b = "Tutorial %s" % tag, "Changed on A %s" % tag, "Changed on B %s" % tag
    add_todo(a, demo.a, original)
    assert "Pushed 1" in sync(a, demo.a)
    sync(b, demo.b)
    assert original in todo_texts(b, demo.b)
    edit_todo(a, demo.a, original, text_a)
    edit_todo(b, demo.b, original, text_b)
    assert "Pushed 1" in sync(a, demo.a)
    result = sync(b, demo.b)
    assert "1 conflict" in result, result
    assert header_count(b, "conflicts") == 1
    open_page(b, demo.b + "/conflicts")
    b.find_element(By.LINK_TEXT, "Resolve").click()
    wait_for(b, "table.compare")
    return text_a, text_b, b.current_url


def cell(driver, field, side):
    row = driver.find_element(By.XPATH, "//table[contains(@class,'compare')]//tr[th[normalize-space()='%s']]" % field)
    return row.find_element(By.CSS_SELECTOR, "td[data-side='%s']" % side)


def test_use_client_keeps_b_text_on_both_devices(demo, browsers):
    a, b = browsers
    text_a, text_b, conflict_url = make_conflict(demo, a, b)
    assert cell(b, "text", "server").text == text_a
    assert cell(b, "text", "client").text == text_b
    assert "differs" in cell(b, "text", "client").get_attribute("class")
    b.find_element(By.XPATH, "//button[normalize-space()='Use Client']").click()
    assert "Kept your value" in flash_text(b, "Kept your value")
    assert header_count(b, "conflicts") == 0
    sync(a, demo.a)
    assert text_b in todo_texts(a, demo.a)
    assert text_b in todo_texts(b, demo.b)
    assert text_a not in todo_texts(a, demo.a)


def test_use_server_takes_a_text_and_empties_the_queue(demo, browsers):
    a, b = browsers
    text_a, text_b, _ = make_conflict(demo, a, b)
    b.find_element(By.XPATH, "//button[normalize-space()='Use Server']").click()
    assert "Took the server's value" in flash_text(b, "Took the server's value")
    assert text_a in todo_texts(b, demo.b)
    assert text_b not in todo_texts(b, demo.b)
    assert header_count(b, "pending") == 0
    open_page(b, demo.b + "/operations")
    assert "Nothing to push" in b.page_source


def test_cancel_leaves_the_change_pending_and_the_conflict_returns(demo, browsers):
    a, b = browsers
    text_a, text_b, _ = make_conflict(demo, a, b)
    b.find_element(By.XPATH, "//button[normalize-space()='Cancel']").click()
    assert "Left your change pending" in flash_text(b, "Left your change pending")
    assert header_count(b, "conflicts") == 0
    assert header_count(b, "pending") == 1
    assert text_b in todo_texts(b, demo.b)
    assert "1 conflict" in sync(b, demo.b)
    assert header_count(b, "conflicts") == 1
