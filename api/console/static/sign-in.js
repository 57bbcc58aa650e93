// A sign-in link carries the token in its fragment, which never reaches the server or its
// logs: put it in the form and drop it from the address bar. Without this script, paste it.
(function () {
  var match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (!match) { return; }
  document.getElementById("token").value = decodeURIComponent(match[1]);
  window.history.replaceState(null, "", window.location.pathname);
}());
