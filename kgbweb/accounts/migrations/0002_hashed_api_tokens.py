"""Carry every DRF token (rest_framework.authtoken, stored in plain text) over to django-rest-knox, which keeps
only a SHA-512 digest and a 15-character lookup prefix, then drop the plaintext table. The keys users hold
keep working: knox hashes what a request presents and compares digests."""

import datetime

from django.db import migrations
from django.utils import timezone

DRF_TABLE = "authtoken_token"


def carry_drf_tokens(apps, schema_editor):
    from knox.crypto import hash_token
    from knox.settings import CONSTANTS, knox_settings

    connection = schema_editor.connection
    if DRF_TABLE not in connection.introspection.table_names():
        return  # a fresh install: DRF's tokens were never there
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {connection.ops.quote_name('key')}, user_id, created FROM {DRF_TABLE}")
        rows = cursor.fetchall()
    auth_token = apps.get_model("knox", "AuthToken")
    ttl = knox_settings.TOKEN_TTL
    for key, user_id, created in rows:
        if isinstance(created, str):
            created = datetime.datetime.fromisoformat(created)
        if created is not None and timezone.is_naive(created):
            created = timezone.make_aware(created, datetime.timezone.utc)
        created = created or timezone.now()
        token = auth_token(token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH], digest=hash_token(key), user_id=user_id,
                           expiry=timezone.now() + ttl if ttl else None)
        token.save()
        auth_token.objects.filter(pk=token.pk).update(created=created)  # auto_now_add set it to now
    schema_editor.execute(schema_editor.sql_delete_table % {"table": schema_editor.quote_name(DRF_TABLE)})
    schema_editor.execute("DELETE FROM django_migrations WHERE app = %s", ["authtoken"])
    apps.get_model("contenttypes", "ContentType").objects.filter(app_label="authtoken").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("kgb_accounts", "0001_cache_table"),
        ("knox", "0009_extend_authtoken_field"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]
    operations = [migrations.RunPython(carry_drf_tokens, migrations.RunPython.noop, elidable=False)]
