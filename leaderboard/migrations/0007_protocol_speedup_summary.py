"""The protocol's speedup (PROTOCOL 6) in the boards' summary, beside the device-time one. No rebuild: every
run recorded before it has no protocol speedup, so the new columns' null and zero are what a rebuild gives."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0006_best_verdict_clean_speedup_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="bestverdict",
            name="log_protocol_speedup",
            field=models.FloatField(help_text="ln(protocol_speedup) where positive", null=True),
        ),
        migrations.AddField(
            model_name="bestverdict",
            name="protocol_speedup",
            field=models.FloatField(help_text="The deciding kernel's protocol speedup; null = unknown", null=True),
        ),
        migrations.AddField(
            model_name="boardtotal",
            name="protocol_covered",
            field=models.PositiveIntegerField(default=0, help_text="Clean passes with a known protocol speedup"),
        ),
        migrations.AddField(
            model_name="boardtotal",
            name="protocol_log_sum",
            field=models.FloatField(default=0.0, help_text="Their protocol speedups' logarithms, summed"),
        ),
        migrations.AddField(
            model_name="boardtotal",
            name="protocol_logged",
            field=models.PositiveIntegerField(default=0, help_text="Of those, with a positive protocol speedup"),
        ),
    ]
