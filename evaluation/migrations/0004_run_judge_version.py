from django.db import migrations, models

FINISHED = ["passed", "failed_compile", "failed_runtime", "failed_correctness", "timeout", "rejected", "error"]


def finished_runs_were_judged_by_version_1(apps, schema_editor):
    # Verdicts already on record were made before runs carried the judge's version: version 1.
    apps.get_model("evaluation", "Run").objects.filter(status__in=FINISHED).update(judge_version=1)


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0003_owner_turn"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="judge_version",
            field=models.PositiveIntegerField(
                blank=True, help_text="The judge's protocol version that made the verdict; null until judged", null=True
            ),
        ),
        migrations.RunPython(finished_runs_were_judged_by_version_1, migrations.RunPython.noop),
    ]
