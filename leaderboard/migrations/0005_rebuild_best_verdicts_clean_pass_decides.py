"""Rebuild the summary under the corrected rules: a clean pass decides its operator over a faster flagged one
(before, a flagged fastest kernel left the operator unsolved although another kernel passed cleanly), and a
run that ended as ``error`` (our side failed) no longer supersedes its kernel's earlier verdict."""

from django.db import migrations


def rebuild(apps, schema_editor):
    from leaderboard.best_verdicts import rebuild

    rebuild(apps=apps)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0004_fill_best_verdicts"),
    ]

    # Going back keeps the rows: the older rule's rows are what a rebuild then would differ in, nothing else.
    operations = [migrations.RunPython(rebuild, migrations.RunPython.noop)]
