// The review queue's keyboard: j/k move between rows, x ticks the current one, a approves and
// r rejects it (groups: both open the confirmation), n/p turn the page. Keys typed into a
// field are left alone. Without this script every action stays a link or a button.
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
      case "n": turn("next"); break;
      case "p": turn("prev"); break;
      default: return;
    }
    event.preventDefault();
  });
}());
