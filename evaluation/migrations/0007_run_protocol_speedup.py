"""A run stores the protocol's speedup (PROTOCOL 6, the paper's) beside the device-time one; runs judged
before have none (null)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0006_rejudge"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="protocol_speedup",
            field=models.FloatField(
                blank=True,
                help_text="The protocol's (the paper's) speedup: geomean over every timed case, call latency, L2 flushed",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="protocol_speedup_ci_high",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="run",
            name="protocol_speedup_ci_low",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="run",
            name="speedup",
            field=models.FloatField(
                blank=True,
                help_text="Device-time speedup: geometric mean over the large cases, launch cost hidden",
                null=True,
            ),
        ),
    ]
