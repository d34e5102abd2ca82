// A <select class="autosubmit"> sends its form as soon as the choice changes. A handler attached here, not
// an inline onchange="...": the Content-Security-Policy runs no inline script (docs/csp.md).
(function () {
  for (const input of document.querySelectorAll(".autosubmit")) {
    input.addEventListener("change", () => input.form.submit());
  }
})();
