"""`todosync client watch` against `todosync serve`: a row written on the service is printed as it is
pulled, without polling (the change channel), and Ctrl-C ends the watch cleanly."""
import json
import os
import signal
import tempfile
import urllib.request

from conftest import Launch, start


def insert(url, item):
    request = urllib.request.Request(
        url + "/tables/todoitem", data=json.dumps(item).encode(),
        headers={"ZUMO-API-VERSION": "2.0.0", "Content-Type": "application/json"}, method="POST")
    assert urllib.request.urlopen(request, timeout=10).status == 201


def line_with(text):
    return lambda lines: next((line for line in lines if text in line), None)


def test_watch_prints_each_row_as_the_service_announces_it_and_stops_on_ctrl_c():
    folder = tempfile.mkdtemp(prefix="todosync-watch-")
    serve, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite")],
                       r"(http://127\.0\.0\.1:\d+)")
    # Polling would take an hour: a row that shows came through the channel.
    watch = Launch(["client", "--store", os.path.join(folder, "client.sqlite"), "--remote", url, "watch",
                    "--only-table", "--every", "3600"])
    try:
        watch.wait_for(line_with("on the service's change channel"), "the watch")
        insert(url, {"id": "announced", "text": "written on the service"})
        assert 'text="written on the service"' in watch.wait_for(line_with("todoitem  announced"), "the row")
        watch.process.send_signal(signal.SIGINT)
        assert watch.process.wait(timeout=10) == 0, watch.output
    finally:
        watch.kill()
        os.killpg(serve.pid, signal.SIGKILL)
        serve.wait()
