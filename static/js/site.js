// The phone menu: the nav collapses under a button below 760 px (CSS); this toggles it open and shut.
(function () {
  const toggle = document.getElementById("nav-toggle");
  const bar = document.getElementById("topbar");
  if (!toggle || !bar) return;
  toggle.addEventListener("click", () => {
    const open = bar.classList.toggle("nav-open");
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });
})();
