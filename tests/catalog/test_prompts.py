"""Prompt packs: one line per operator of a set, each with the entry points and a prompt built from the record."""

from __future__ import annotations

import csv
import json

from django.conf import settings
from django.core.management import call_command

from evaluation.catalog.prompts import operator_prompt
from evaluation.catalog.registry import all_operators, get_operator


def operators_csv_ids(source: str | None = None) -> list[str]:
    with open(settings.KGB_DATA_FILES_DIR / "operators.csv", newline="") as handle:
        return sorted(row["operator_id"] for row in csv.DictReader(handle) if source in (None, row["source"]))


def test_every_benchmark_operator_has_exactly_one_record():
    assert sorted(all_operators()) == operators_csv_ids()


def test_export_prompts_writes_one_line_per_operator_of_the_set(catalog, tmp_path):
    for set_slug, expected in (("kgb-mc", 110), ("kgb-ms", 210)):
        out = tmp_path / f"{set_slug}.jsonl"
        call_command("export_prompts", "--set", set_slug, "--chip", "nvidia-h200", "--out", str(out))
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(lines) == expected
        assert len({line["operator_id"] for line in lines}) == expected
        for line in lines:
            assert line["entry_points"] and line["prompt"]
            assert line["file_name"] == line["operator_id"].replace("::", "__") + ".py"
    mc_ids = sorted(json.loads(line)["operator_id"] for line in (tmp_path / "kgb-mc.jsonl").read_text().splitlines())
    assert mc_ids == operators_csv_ids("aten")


def test_prompt_names_every_entry_point_and_the_chip_quirks():
    spec = get_operator("aten::cos")
    prompt = operator_prompt(spec, "nvidia-h200")
    for entry in spec.entry_points:
        assert f"def {entry.signature}" in prompt
    assert 'input_precision="ieee"' in prompt  # NVIDIA's tf32 quirk
    assert "aten__cos.py" in prompt
    assert "Triton's CPU interpreter" in operator_prompt(spec, "cpu-interpreter")
