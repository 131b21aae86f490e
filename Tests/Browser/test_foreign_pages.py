"""A page on another site cannot write into the table service: its forms and simple fetches are
refused, nothing is stored and no column is added."""
import json
import time
import urllib.parse
import urllib.request


def service_rows(service):
    request = urllib.request.Request(
        service + "/tables/todoitem?$top=1000&__includeDeleted=true", headers={"ZUMO-API-VERSION": "2.0.0"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def open_foreign_page(browser, html):
    """Opens `html` as a page of no site (a data: URL, origin "null") and lets its script run."""
    browser.get("data:text/html;charset=utf-8," + urllib.parse.quote(html))
    time.sleep(1.0)


def test_forms_and_simple_fetches_from_another_page_write_nothing(demo, browser):
    before = service_rows(demo.service)
    for enctype in ("application/x-www-form-urlencoded", "text/plain", "multipart/form-data"):
        open_foreign_page(browser, """
            <form method="post" action="%s/tables/todoitem" enctype="%s">
              <input name="text" value="forged by a form"><input name="injected" value="column">
            </form>
            <script>document.forms[0].submit()</script>""" % (demo.service, enctype))
        assert "are refused" in browser.page_source, enctype
    open_foreign_page(browser, """
        <script>
          fetch("%s/tables/todoitem", {method: "POST", mode: "no-cors",
                headers: {"Content-Type": "text/plain"}, body: '{"text": "forged by fetch", "injected": 1}'});
        </script>""" % demo.service)
    after = service_rows(demo.service)
    assert len(after) == len(before)
    assert all("injected" not in row for row in after)
    assert not any("forged" in str(row.get("text")) for row in after)


def test_every_demo_server_refuses_a_foreign_host_name(demo):
    import http.client
    for base in (demo.a, demo.b, demo.service):
        host, port = urllib.parse.urlparse(base).hostname, urllib.parse.urlparse(base).port
        for name, expected in (("evil.example", 421), ("localhost", 200)):
            connection = http.client.HTTPConnection(host, port, timeout=10)
            path = "/tables/todoitem" if base == demo.service else "/"
            connection.request("GET", path, headers={"Host": "%s:%d" % (name, port), "ZUMO-API-VERSION": "2.0.0"})
            status = connection.getresponse().status
            connection.close()
            assert status == expected, (base, name, status)
