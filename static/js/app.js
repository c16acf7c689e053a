// Small progressive enhancements; every page works without them.
(function () {
  "use strict";

  // Show the custom-preparation description only when "Custom" is chosen.
  function syncCustomPreparation() {
    var box = document.getElementById("custom-preparation");
    if (!box) return;
    var chosen = document.querySelector('input[name="preparation"]:checked');
    var textarea = box.querySelector("textarea");
    var hasText = textarea && textarea.value.trim() !== "";
    box.hidden = !(chosen && chosen.value === box.dataset.shownFor) && !hasText;
  }

  document.addEventListener("change", function (event) {
    if (event.target && event.target.name === "preparation") syncCustomPreparation();
  });
  document.addEventListener("DOMContentLoaded", syncCustomPreparation);

  // Payment countdown: <span data-expires-at="ISO"> shows the time left, then its
  // data-expired-label. Without JS the absolute expiry stays on the page.
  function pad(number) {
    return number < 10 ? "0" + number : String(number);
  }

  function formatLeft(ms) {
    var seconds = Math.floor(ms / 1000);
    var hours = Math.floor(seconds / 3600);
    var minutes = Math.floor((seconds % 3600) / 60);
    var rest = seconds % 60;
    return (hours ? hours + ":" + pad(minutes) : String(minutes)) + ":" + pad(rest);
  }

  function tickCountdowns() {
    var boxes = document.querySelectorAll("[data-expires-at]");
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      if (box.dataset.countdownDone) continue;
      var expires = Date.parse(box.dataset.expiresAt);
      if (isNaN(expires)) continue;
      var left = expires - Date.now();
      var shown = box.querySelector("[data-countdown-left]");
      var value = box.querySelector("[data-countdown-value]");
      if (left <= 0) {
        box.textContent = box.dataset.expiredLabel || "";
        box.dataset.countdownDone = "1";
        continue;
      }
      if (shown && value) {
        value.textContent = formatLeft(left);
        shown.hidden = false;
      }
    }
  }

  // Copy buttons: <button data-copy="text" data-copied-label="Copied" hidden>; shown only
  // where the browser lets a page write to the clipboard.
  function setUpCopyButtons() {
    if (!(navigator.clipboard && window.isSecureContext)) return;
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) buttons[i].hidden = false;
  }

  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest ? event.target.closest("button[data-copy]") : null;
    if (!button) return;
    navigator.clipboard.writeText(button.dataset.copy).then(function () {
      if (!button.dataset.label) button.dataset.label = button.textContent;
      button.textContent = button.dataset.copiedLabel || button.dataset.label;
      button.classList.add("copied");
      window.clearTimeout(button._copiedTimer);
      button._copiedTimer = window.setTimeout(function () {
        button.textContent = button.dataset.label;
        button.classList.remove("copied");
      }, 2000);
    });
  });

  var countdownTimer = null;

  function setUpCountdowns() {
    if (countdownTimer === null && document.querySelector("[data-expires-at]")) {
      countdownTimer = window.setInterval(tickCountdowns, 1000);
    }
    tickCountdowns();
  }

  document.addEventListener("DOMContentLoaded", function () {
    setUpCopyButtons();
    setUpCountdowns();
  });
  // Content swapped in by htmx (the payment page's instructions once the amount still due
  // changes) gets its copy buttons and countdown too.
  document.addEventListener("htmx:load", function () {
    setUpCopyButtons();
    setUpCountdowns();
  });

  // The configurator's live summary lists what the server refused ([data-error-for=name]):
  // those fields are marked invalid and described by their message; the others lose the mark,
  // and the messages rendered beside the fields with the page make way for the summary's.
  function markConfiguratorErrors() {
    var form = document.getElementById("configurator");
    var summary = document.getElementById("summary");
    if (!form || !summary) return;
    var stale = form.querySelectorAll(".errorlist");
    for (var i = 0; i < stale.length; i++) stale[i].hidden = true;
    var controls = form.querySelectorAll("input[name], select[name], textarea[name]");
    for (var j = 0; j < controls.length; j++) {
      var control = controls[j];
      if (control.type === "hidden") continue;
      var error = summary.querySelector('[data-error-for="' + control.name + '"]');
      var described = (control.getAttribute("aria-describedby") || "").split(" ").filter(function (id) {
        return id && id.indexOf("summary-error-") !== 0 && !/_error$/.test(id);
      });
      if (error) {
        control.setAttribute("aria-invalid", "true");
        described.push(error.id);
      } else {
        control.removeAttribute("aria-invalid");
      }
      if (described.length) control.setAttribute("aria-describedby", described.join(" "));
      else control.removeAttribute("aria-describedby");
    }
  }

  document.addEventListener("htmx:afterSettle", markConfiguratorErrors);
})();
