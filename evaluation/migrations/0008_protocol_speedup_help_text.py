"""The protocol speedup's help text: each source is timed as the paper's harness times it (cuBLAS with no
L2 flush), not "L2 flushed" for all."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('evaluation', '0007_run_protocol_speedup'),
    ]

    operations = [
        migrations.AlterField(
            model_name='run',
            name='protocol_speedup',
            field=models.FloatField(blank=True, help_text="The protocol's (the paper's) speedup: geomean over every timed case, call latency as the paper's harness times it", null=True),
        ),
    ]
