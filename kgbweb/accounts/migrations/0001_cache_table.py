"""The database cache's table (settings.CACHES): `migrate` alone makes a fresh install's throttles and
lockouts shared by every process. Nothing is made when the cache is Redis."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop, elidable=False)]
