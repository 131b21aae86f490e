// Pages that follow the store (an enhancement: with JavaScript off the pages are as they were).
// The page opens one EventSource on its own address; the dashboard sends the page's fragments,
// rendered by the same templates as the page, whenever the store changes (see
// Sources/Dashboard/Live). This script only puts them in place:
// - it changes only the nodes that differ, so focus, typing in other fields, ticked boxes and the
//   scroll position stay; a row that changed or appeared is marked for a moment;
// - an editor ([data-live-editor]) someone typed in is never overwritten: its notice says the row
//   changed and offers the new values;
// - the header's follow label says Offline while the stream is down (EventSource reconnects).
(function () {
  "use strict";
  if (!window.EventSource || !document.querySelector("main [data-live-fragment]")) return;
  var status = document.getElementById("live-status");
  var held = {};  // fragments kept from an editor someone types in, by element id
  var MARK = "live-changed";
  var ITEM = "tr[id], article[id]";  // a list's rows, the journal's entries

  function itemOf(node) {
    var element = node.nodeType === 1 ? node : node.parentElement;
    return element && element.closest(ITEM);
  }

  function mark(node, marks) {
    var item = itemOf(node);
    if (item && marks.indexOf(item) < 0) marks.push(item);
  }

  // A node put in whole: it is a new row, is in one, or holds new rows (a list that was empty).
  function markNew(node, marks) {
    if (itemOf(node)) return mark(node, marks);
    if (node.querySelectorAll) Array.prototype.forEach.call(node.querySelectorAll(ITEM), function (item) { mark(item, marks); });
  }

  // An element's attributes by name, without the mark this script adds.
  function attributesOf(element) {
    var attributes = {};
    Array.prototype.forEach.call(element.attributes, function (attribute) { attributes[attribute.name] = attribute.value; });
    if ("class" in attributes) {
      attributes["class"] = attributes["class"].split(/\s+/).filter(function (name) { return name && name !== MARK; }).join(" ");
      if (!attributes["class"]) delete attributes["class"];
    }
    return attributes;
  }

  // Gives `current` the attributes of `fresh`; returns whether any differed.
  function syncAttributes(current, fresh) {
    var had = attributesOf(current), wanted = attributesOf(fresh), changed = false, marked = current.classList.contains(MARK);
    Object.keys(had).forEach(function (name) {
      if (!(name in wanted)) { current.removeAttribute(name); changed = true; }
    });
    Object.keys(wanted).forEach(function (name) {
      if (had[name] === wanted[name]) return;
      changed = true;
      current.setAttribute(name, wanted[name]);
      // An input shows its property, not its attribute, once it was touched.
      if (name === "value" && "value" in current) current.value = wanted[name];
    });
    if ("checked" in current && ("checked" in had) !== ("checked" in wanted)) current.checked = "checked" in wanted;
    if (marked) current.classList.add(MARK);
    return changed;
  }

  function sameKind(a, b) {
    return a.nodeType === b.nodeType && a.nodeName === b.nodeName && (a.id || "") === (b.id || "");
  }

  // Makes `current` (in the page) equal to `fresh`, keeping every node that can stay.
  function morph(current, fresh, marks) {
    if (current.isEqualNode(fresh) && !(current.classList && current.classList.contains(MARK))) return;
    if (!sameKind(current, fresh)) {
      current.replaceWith(fresh);
      markNew(fresh, marks);
      return;
    }
    if (current.nodeType !== 1) {
      current.nodeValue = fresh.nodeValue;
      mark(current, marks);
      return;
    }
    if (current.nodeName === "TEXTAREA" && current.value !== fresh.value) current.value = fresh.value;
    if (syncAttributes(current, fresh)) mark(current, marks);
    morphChildren(current, fresh, marks);
  }

  function morphChildren(parent, freshParent, marks) {
    var byId = {};
    Array.prototype.forEach.call(parent.children, function (child) { if (child.id) byId[child.id] = child; });
    var cursor = parent.firstChild;
    Array.prototype.slice.call(freshParent.childNodes).forEach(function (fresh) {
      var match = null;
      if (fresh.nodeType === 1 && fresh.id) {
        match = byId[fresh.id] || null;
      } else if (cursor && sameKind(cursor, fresh) && !(cursor.nodeType === 1 && cursor.id)) {
        match = cursor;
      }
      if (match) {
        if (match === cursor) cursor = cursor.nextSibling;
        else parent.insertBefore(match, cursor);
        morph(match, fresh, marks);
      } else {
        parent.insertBefore(fresh, cursor);
        markNew(fresh, marks);
      }
    });
    while (cursor) {
      var next = cursor.nextSibling;
      parent.removeChild(cursor);
      cursor = next;
    }
  }

  function parse(html) {
    var template = document.createElement("template");
    template.innerHTML = html.trim();
    return template.content.firstElementChild;
  }

  // Whether someone typed in an editor (or it shows a refused edit, which is their typing too).
  function typedIn(editor) {
    return editor.dataset.liveTyped === "yes" || editor.querySelector("[aria-invalid='true'], .field-error") !== null;
  }

  function noticeFor(id) {
    return document.querySelector('[data-live-notice-for="' + id + '"]');
  }

  // Puts one fragment in place; returns the rows it changed.
  function apply(fresh) {
    var current = fresh && document.getElementById(fresh.id);
    if (!current) return [];
    if (current.hasAttribute("data-live-editor") && typedIn(current)) {
      if (current.isEqualNode(fresh)) return [];
      held[fresh.id] = fresh;
      var notice = noticeFor(fresh.id);
      if (notice && notice.hidden) {
        notice.hidden = false;
        announce(notice.querySelector("p").textContent);
      }
      return [];
    }
    var marks = [];
    morph(current, fresh, marks);
    return marks;
  }

  function show(marks) {
    marks.forEach(function (item) {
      if (!item.isConnected) return;
      item.classList.remove(MARK);
      void item.offsetWidth;  // restarts the fade when the row changes again
      item.classList.add(MARK);
    });
  }

  function announce(text) {
    if (status) status.textContent = text;
  }

  function keepingPlace(change) {
    var focused = document.activeElement, focusedId = focused && focused.id;
    var x = window.scrollX, y = window.scrollY;
    var result = change();
    if (focusedId && document.activeElement !== focused) {
      var again = document.getElementById(focusedId);
      if (again) again.focus({ preventScroll: true });
    }
    window.scrollTo(x, y);
    return result;
  }

  document.addEventListener("input", function (event) {
    var editor = event.target.closest && event.target.closest("[data-live-editor]");
    if (editor) editor.dataset.liveTyped = "yes";
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-live-load]");
    if (!button) return;
    var notice = button.closest("[data-live-notice-for]");
    var id = notice.getAttribute("data-live-notice-for");
    var editor = document.getElementById(id), fresh = held[id];
    notice.hidden = true;
    if (!editor || !fresh) return;
    delete held[id];
    editor.replaceWith(fresh);
    show([fresh]);
    var first = fresh.querySelector("input:not([type=hidden]), textarea, select");
    if (first) first.focus();
    announce("The new values are loaded.");
  });

  document.addEventListener("animationend", function (event) {
    if (event.target.classList) event.target.classList.remove(MARK);
  });

  var source = new EventSource(location.pathname + location.search);
  source.addEventListener("fragments", function (event) {
    var update = JSON.parse(event.data);
    var marks = keepingPlace(function () {
      var all = [];
      update.fragments.forEach(function (html) { all = all.concat(apply(parse(html))); });
      return all;
    });
    show(marks);
    if (marks.length) announce(marks.length === 1 ? "1 row changed." : marks.length + " rows changed.");
    document.documentElement.dataset.liveRevision = update.revision;
  });
  source.addEventListener("missing", function (event) {
    var message = JSON.parse(event.data).message;
    var notice = document.querySelector("[data-live-notice-for]");
    if (notice) {
      notice.querySelector("p").textContent = message;
      var load = notice.querySelector("[data-live-load]");
      if (load) load.hidden = true;
      notice.hidden = false;
    }
    announce(message);
  });
  source.addEventListener("open", function () {
    document.documentElement.dataset.live = "open";
  });
  source.addEventListener("error", function () {
    document.documentElement.dataset.live = "down";
    var label = document.querySelector('[data-field="followLabel"]');
    if (label) label.textContent = "Offline";
  });
})();
