// Enhancements only: every page works without this script.
// - keeps the header's counts and sync progress live (polls /api/status);
// - starts Sync without leaving the page, shows Cancel while it runs, and reloads once the result is in;
// - asks before deleting (the server shows a confirmation page when no script asked);
// - ticks a list's checkbox (a todo done) without reloading the page.
(function () {
  "use strict";
  document.documentElement.dataset.enhanced = "yes";
  var bar = document.getElementById("syncbar");
  if (!bar) return;
  var statusURL = bar.getAttribute("data-status-url");
  var button = bar.querySelector("[data-sync-button]");
  var form = bar.querySelector("[data-sync-form]");
  var cancelForm = bar.querySelector("[data-cancel-form]");
  var running = button && button.disabled;
  // Reload when a sync this page started ends (its result waits as a message), never for one
  // auto-sync started in the background: that would throw away what the person is typing.
  var awaitingResult = false;
  var timer = null;

  function field(name) { return bar.querySelector('[data-field="' + name + '"]'); }
  function setText(name, value) { var el = field(name); if (el && value !== undefined) el.textContent = value; }

  function show(status) {
    setText("pending", status.pending);
    setText("conflicts", status.conflicts);
    setText("conflictsWord", status.conflictsWord);
    setText("refused", status.refused);
    setText("progress", status.progress || "");
    setText("autoSyncLabel", status.autoSyncLabel || "");
    setText("stateLabel", status.stateLabel);
    var pending = field("pendingLink"), conflicts = field("conflictsLink"), refused = field("refusedLink");
    var state = field("state");
    if (pending) pending.classList.toggle("has-pending", status.hasPending);
    if (conflicts) conflicts.classList.toggle("has-conflicts", status.hasConflicts);
    if (refused) refused.hidden = !status.hasRefused;
    if (state) state.className = "remote state-" + status.state;
    if (button) {
      button.disabled = status.running;
      button.textContent = status.running ? "Syncing…" : "Sync";
    }
    if (cancelForm) cancelForm.hidden = !status.running;
    if (awaitingResult && !status.running) {
      // The result is waiting as a message on the next page: show it with fresh data.
      window.location.reload();
      return;
    }
    running = status.running;
    schedule(running ? 600 : 5000);
  }

  function poll() {
    fetch(statusURL, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : Promise.reject(response.status); })
      .then(show)
      .catch(function () { schedule(5000); });
  }

  function schedule(ms) {
    if (timer) clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  if (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (button) { button.disabled = true; button.textContent = "Syncing…"; }
      var body = new URLSearchParams(new FormData(form));
      fetch(form.action, { method: "POST", body: body, credentials: "same-origin", redirect: "manual" })
        .then(function () { running = true; awaitingResult = true; if (cancelForm) cancelForm.hidden = false; schedule(200); })
        .catch(function () { form.submit(); });
    });
  }

  // Asks before deleting; the server asks on a page of its own when no script confirmed.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var message = form.getAttribute("data-confirm");
    if (!message) return;
    if (!window.confirm(message)) { event.preventDefault(); return; }
    var confirmed = document.createElement("input");
    confirmed.type = "hidden";
    confirmed.name = "confirm";
    confirmed.value = "yes";
    form.appendChild(confirmed);
  });

  // A list's checkboxes (a todo's Done, any true/false column): sets the value in place instead of
  // reloading the page; the row's sync state then shows the queued change.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute("data-quick-set")) return;
    event.preventDefault();
    var button = form.querySelector("button");
    var value = form.querySelector('input[name="value"]');
    var checked = value.value === "true";
    var body = new URLSearchParams(new FormData(form));
    button.disabled = true;
    fetch(form.action, { method: "POST", body: body, credentials: "same-origin", redirect: "manual" })
      .then(function (response) {
        if (response.type !== "opaqueredirect" && !response.ok) return Promise.reject(response.status);
        var row = form.closest("tr");
        button.setAttribute("aria-checked", checked ? "true" : "false");
        value.value = checked ? "false" : "true";
        if (row) {
          if (form.hasAttribute("data-marks-done")) row.classList.toggle("done", checked);
          var synced = row.querySelector(".badge-synced");
          if (synced) {
            var link = document.createElement("a");
            link.className = "badge badge-update";
            link.href = "/operations";
            link.textContent = "pending update";
            synced.replaceWith(link);
          }
        }
        button.disabled = false;
        schedule(100);
      })
      .catch(function () { form.submit(); });
  });

  schedule(running ? 400 : 5000);
})();
