"""The clean passes with a known speedup, from an index alone: what speedup figures read."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0005_run_chip_finished_index"),
        ("leaderboard", "0005_rebuild_best_verdicts_clean_pass_decides"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="bestverdict",
            index=models.Index(
                condition=models.Q(("flagged", False), ("native", True), ("solved", True), ("speedup__isnull", False)),
                fields=["chip", "operator", "method"],
                include=("speedup",),
                name="best_verdict_clean_speedup",
            ),
        ),
    ]
