// Board filters apply as soon as a choice changes (the Apply button stays for typing and for no-JS use).
(function () {
  for (const input of document.querySelectorAll("form.filters .autosubmit, #filters .autosubmit")) {
    input.addEventListener("change", () => input.form.submit());
  }
})();
