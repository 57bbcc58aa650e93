// The review queue's keyboard: j/k move between rows, x ticks the current one, a approves and
// r rejects it (groups: both open the confirmation), e opens or closes its evidence in
// context, n/p turn the page. Keys typed into a field are left alone. An item's evidence in
// context is fetched when it is first opened (the page carries only the quote). Without this
// script every action stays a link or a button, and the proposal's own page shows the evidence.
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll("#queue-table tbody tr.item"));
  var current = -1;
  var form = document.getElementById("bulk");
  var pickPage = document.getElementById("pick-page");

  function boxes() {
    return Array.prototype.slice.call(document.querySelectorAll("#queue-table tbody input[name=change]"));
  }

  if (pickPage) {
    pickPage.addEventListener("change", function () {
      boxes().forEach(function (box) { box.checked = pickPage.checked; });
    });
  }

  function focusRow(index) {
    if (!rows.length) { return; }
    current = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach(function (row, i) { row.classList.toggle("current", i === current); });
    rows[current].setAttribute("aria-current", "true");
    rows.forEach(function (row, i) { if (i !== current) { row.removeAttribute("aria-current"); } });
    rows[current].focus();
  }

  function only(row) {
    boxes().forEach(function (box) { box.checked = box.value === row.getAttribute("data-change"); });
  }

  function decide(action) {
    if (current < 0) { return; }
    var row = rows[current];
    if (!form) {  // the groups: their confirmation links
      var link = row.querySelector("a[data-key=" + (action === "approve" ? "a" : "r") + "]");
      if (link) { window.location.href = link.href; }
      return;
    }
    var text = document.getElementById("bulk-text");
    if (action === "reject") {
      var reason = window.prompt("Reason for rejecting this proposal");
      if (!reason || !reason.trim()) { return; }
      text.value = reason;
    }
    only(row);
    form.requestSubmit(document.getElementById(action + "-selected"));
  }

  // The evidence in context of a row, loaded on its first opening. The fragment is the
  // console's own autoescaped HTML; a redirect (the session ended) or an error leaves a note
  // and lets a later opening try again.
  function loadContext(details) {
    var row = details.closest("tr.item");
    var body = details.querySelector(".context");
    if (!row || !body || details.getAttribute("data-loaded")) { return; }
    var ids = row.getAttribute("data-change").split("/");
    details.setAttribute("data-loaded", "loading");
    body.setAttribute("aria-busy", "true");
    fetch("/console/subjects/" + ids[0] + "/proposals/" + ids[1] + "/context", {
      credentials: "same-origin", redirect: "error", headers: { "Accept": "text/html" }
    }).then(function (response) {
      if (!response.ok) { throw new Error(String(response.status)); }
      return response.text();
    }).then(function (html) {
      body.innerHTML = html;
      details.setAttribute("data-loaded", "yes");
    }).catch(function () {
      body.textContent = "The evidence could not be loaded: open the proposal's page, or close and open this again.";
      details.removeAttribute("data-loaded");
    }).then(function () { body.removeAttribute("aria-busy"); });
  }

  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (details.tagName === "DETAILS" && details.open && details.classList.contains("in-context")) {
      loadContext(details);
    }
  }, true);  // toggle does not bubble

  function toggleContext() {
    if (current < 0) { return; }
    var details = rows[current].querySelector("details.in-context");
    if (details) { details.open = !details.open; }
  }

  function turn(rel) {
    var link = document.querySelector("nav.pages a[rel=" + rel + "]");
    if (link) { window.location.href = link.href; }
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var tag = target && target.tagName;
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (tag === "INPUT" && target.type !== "checkbox" || tag === "TEXTAREA" || tag === "SELECT") { return; }
    switch (event.key) {
      case "j": focusRow(current + 1); break;
      case "k": focusRow(current < 0 ? 0 : current - 1); break;
      case "x":
        if (current >= 0 && form) {
          var box = rows[current].querySelector("input[name=change]");
          box.checked = !box.checked;
        }
        break;
      case "a": decide("approve"); break;
      case "r": decide("reject"); break;
      case "e": toggleContext(); break;
      case "n": turn("next"); break;
      case "p": turn("prev"); break;
      default: return;
    }
    event.preventDefault();
  });
}());
