// The single upload: when the chosen file is named <namespace>__<op>.py, show the operator it names (the
// server infers the same from the name; an explicit choice in the box wins).
(function () {
  const file = document.getElementById("id_kernel_file");
  const operator = document.getElementById("id_operator");
  if (!file || !operator) return;
  const pattern = /^(aten|vllm13|cublas)__([A-Za-z0-9_.]+)\.py$/;
  file.addEventListener("change", () => {
    const chosen = file.files && file.files[0];
    const match = chosen && pattern.exec(chosen.name);
    if (match && !operator.value) operator.value = match[1] + "::" + match[2];
  });
})();
