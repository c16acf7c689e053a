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
})();
