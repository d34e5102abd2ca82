// Draws every figure of the page: the server embeds them as JSON (json_script), keyed by the element id.
(function () {
  const source = document.getElementById("plots-data");
  if (!source || !window.Plotly) return;
  const figures = JSON.parse(source.textContent);
  for (const [id, figure] of Object.entries(figures)) {
    const element = document.getElementById(id);
    if (!element) continue;
    if (!figure.data.length) {
      element.classList.add("plot-empty");
      element.textContent = (figure.layout.title && figure.layout.title.text ? figure.layout.title.text + ": " : "") +
        "no data yet.";
      continue;
    }
    window.Plotly.newPlot(element, figure.data, figure.layout, { responsive: true, displaylogo: false })
      .then(() => element.setAttribute("data-plotted", "1"));
  }
})();
