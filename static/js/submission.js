// Keeps a submission page current while its runs are judged: polls status.json, updates rows in place.
(function () {
  const progress = document.getElementById("progress");
  if (!progress) return;
  const url = progress.dataset.statusUrl;
  const text = (value) => document.createTextNode(value == null ? "–" : String(value));

  function update(data) {
    const bar = document.getElementById("progress-bar");
    bar.max = data.total || 1;
    bar.value = data.finished;
    document.getElementById("progress-text").textContent =
      data.finished + " of " + data.total + " runs finished, " + data.passed + " passed";
    const warning = document.getElementById("no-worker");
    warning.hidden = data.chips_without_worker.length === 0;
    document.getElementById("no-worker-chips").textContent = data.chips_without_worker.join(", ");
    for (const run of data.runs) {
      const row = document.querySelector('tr[data-run="' + run.id + '"]');
      if (!row) continue;
      const status = row.querySelector(".status");
      status.className = "status status-" + run.status;
      status.querySelector("a").textContent = run.status_label;
      // textContent, never innerHTML: reasons carry text a kernel controls.
      row.querySelector(".reason").textContent = run.status === "queued" && run.queue ? run.queue : run.reason;
      const times = (value) => text(value == null ? "–" : value.toFixed(2) + "×");
      row.querySelector("td.protocol-speedup").replaceChildren(times(run.protocol_speedup));
      row.querySelector("td.device-speedup").replaceChildren(times(run.speedup));
    }
    return data.finished < data.total;
  }

  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      if (response.ok && !update(await response.json())) return;
    } catch (error) {
      /* network hiccup: try again */
    }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 1000);
})();
