"""Fill the best-verdict summary, its set totals and the roofline points from the runs already judged, with the
code that rebuilds them later."""

from django.db import migrations


def fill(apps, schema_editor):
    from leaderboard.best_verdicts import rebuild

    rebuild(apps=apps)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0003_best_verdict"),
    ]

    # Emptying the table is all that going back needs: 0003's reversal drops it.
    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
