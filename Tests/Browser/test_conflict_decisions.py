"""Conflicts beyond the three buttons, in Chromium on `todosync demo` (JavaScript on and off):
the per-field pick with its preview, the journal page with Overturn, and a bulk decision undone
in one step from the journal."""
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from dashboard import (wait_for, add_todo, edit_todo, flash_text, header_count, open_page, sync, todo_texts)
from test_tutorial import make_conflict


def test_per_field_pick_previews_then_pushes_the_chosen_values(demo, browsers):
    a, b = browsers
    text_a, text_b, conflict_url = make_conflict(demo, a, b)
    original = text_a.replace("Changed on A", "Tutorial")
    row = b.find_element(By.CSS_SELECTOR, "tr[data-pick-field='text']")
    row.find_element(By.CSS_SELECTOR, "input[value='base']").click()
    b.find_element(By.XPATH, "//button[normalize-space()='Preview']").click()
    WebDriverWait(b, 10).until(lambda driver: "pick.text=base" in driver.current_url)
    preview = wait_for(b, "tr[data-pick-field='text'] td[data-preview]")
    assert preview.text == original
    b.find_element(By.XPATH, "//button[normalize-space()='Push the previewed result']").click()
    assert "Pushed the values you picked" in flash_text(b, "Pushed the values you picked")
    assert header_count(b, "conflicts") == 0
    sync(a, demo.a)
    assert original in todo_texts(a, demo.a)
    assert text_a not in todo_texts(a, demo.a)


def test_journal_page_shows_the_decision_and_overturns_it(demo, browsers):
    a, b = browsers
    text_a, text_b, _ = make_conflict(demo, a, b)
    b.find_element(By.XPATH, "//button[normalize-space()='Use Server']").click()
    assert "Took the server's value" in flash_text(b, "Took the server's value")
    open_page(b, demo.b + "/journal")
    entry = wait_for(b, "article.journal-entry")
    assert "Use Server" in entry.text and "by a person" in entry.text
    cells = {cell.get_attribute("data-side"): cell.text
             for cell in entry.find_elements(By.CSS_SELECTOR, "tr:first-child td")}
    assert cells["client"] == text_b and cells["server"] == text_a and cells["result"] == text_a
    entry.find_element(By.XPATH, ".//button[normalize-space()='Overturn']").click()
    assert "Overturned" in flash_text(b, "Overturned")
    assert text_b in todo_texts(b, demo.b)
    sync(a, demo.a)
    assert text_b in todo_texts(a, demo.a)
    open_page(b, demo.b + "/journal?decision=overturn")
    assert "Overturned" in wait_for(b, "article.journal-entry").text


def test_bulk_use_server_on_two_of_three_and_undo_in_one_step(demo, browsers):
    a, b = browsers
    tag = uuid.uuid4().hex[:6]
    originals = ["Bulk %s %d" % (tag, index) for index in range(3)]
    for text in originals:
        add_todo(a, demo.a, text)
    sync(a, demo.a)
    sync(b, demo.b)
    for text in originals:
        edit_todo(a, demo.a, text, text + " on A")
        edit_todo(b, demo.b, text, text + " on B")
    sync(a, demo.a)
    assert "3 conflicts" in sync(b, demo.b)
    open_page(b, demo.b + "/conflicts?q=" + tag)
    rows = b.find_elements(By.CSS_SELECTOR, "tr[data-conflict]")
    assert len(rows) == 3
    assert originals[0] + " on B" in rows[0].text, "the list shows each todo's text"
    for row in rows[:2]:
        row.find_element(By.CSS_SELECTOR, "input[name='ids']").click()
    b.find_element(By.XPATH, "//button[normalize-space()='Preview Use Server']").click()
    WebDriverWait(b, 10).until(lambda driver: "/conflicts/bulk" in driver.current_url)
    heading = wait_for(b, "main h1")
    assert "Use Server for 2 conflicts" in heading.text
    assert "text × 2" in b.find_element(By.TAG_NAME, "main").text
    b.find_element(By.XPATH, "//button[normalize-space()='Apply Use Server to 2']").click()
    assert "Took the server's values for 2" in flash_text(b, "Took the server's values")
    assert header_count(b, "conflicts") == 1
    texts = todo_texts(b, demo.b)
    assert originals[0] + " on A" in texts and originals[1] + " on A" in texts
    open_page(b, demo.b + "/journal")
    b.find_element(By.LINK_TEXT, "bulk decision").click()
    b.find_element(By.XPATH, "//button[normalize-space()='Undo this bulk decision']").click()
    assert "Undid 2 of 2" in flash_text(b, "Undid 2 of 2")
    texts = todo_texts(b, demo.b)
    assert originals[0] + " on B" in texts and originals[1] + " on B" in texts
    sync(a, demo.a)
    texts = todo_texts(a, demo.a)
    assert originals[0] + " on B" in texts and originals[1] + " on B" in texts
