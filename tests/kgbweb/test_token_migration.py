"""The move from DRF's plaintext tokens to knox's digests: a key a `kgb login` user already holds keeps
working, the plaintext table is gone, and the database holds no key in any form but its digest."""

from __future__ import annotations

import datetime
import importlib
import secrets

import pytest
from django.apps import apps
from django.db import connection
from knox.crypto import hash_token
from knox.models import AuthToken
from rest_framework.test import APIClient

carry = importlib.import_module("kgbweb.accounts.migrations.0002_hashed_api_tokens")


@pytest.fixture
def drf_tokens(transactional_db, django_user_model):
    """DRF's table as a database from before holds it: one token for alice, one for bob."""
    alice = django_user_model.objects.create_user("alice", password="alice-pass-123")
    bob = django_user_model.objects.create_user("bob", password="bob-pass-123")
    keys = {alice.pk: secrets.token_hex(20), bob.pk: secrets.token_hex(20)}  # DRF's keys: 40 hex digits
    with connection.cursor() as cursor:
        cursor.execute(
            'CREATE TABLE authtoken_token ("key" varchar(40) PRIMARY KEY, created timestamp NOT NULL, '
            "user_id integer NOT NULL UNIQUE)"
        )
        for user_id, key in keys.items():
            cursor.execute(
                'INSERT INTO authtoken_token ("key", created, user_id) VALUES (%s, %s, %s)',
                [key, "2025-03-04 05:06:07", user_id],
            )
        cursor.execute(
            "INSERT INTO django_migrations (app, name, applied) VALUES ('authtoken', '0001_initial', "
            "'2025-03-04 05:06:07')"
        )
    yield {"alice": (alice, keys[alice.pk]), "bob": (bob, keys[bob.pk])}
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS authtoken_token")


def test_drf_tokens_are_carried_over_hashed_and_the_plaintext_table_dropped(drf_tokens):
    with connection.schema_editor() as schema_editor:
        carry.carry_drf_tokens(apps, schema_editor)
    assert "authtoken_token" not in connection.introspection.table_names()
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM django_migrations WHERE app = 'authtoken'")
        assert cursor.fetchone() == (0,)
    for name, (user, key) in drf_tokens.items():
        token = AuthToken.objects.get(user=user)
        assert (token.token_key, token.digest) == (key[:15], hash_token(key))
        assert token.created == datetime.datetime(2025, 3, 4, 5, 6, 7, tzinfo=datetime.UTC)
        assert token.expiry is not None and token.expiry > datetime.datetime.now(datetime.UTC)
        me = APIClient().get("/api/me/", HTTP_AUTHORIZATION=f"Token {key}")
        assert (me.status_code, me.json()["username"]) == (200, name)
    alice_key = drf_tokens["alice"][1]
    wrong_key = alice_key[:-1] + ("1" if alice_key.endswith("0") else "0")  # always one character off
    wrong = APIClient().get("/api/me/", HTTP_AUTHORIZATION=f"Token {wrong_key}")
    assert wrong.status_code == 401
    # Nothing of a key is stored but its digest and 15-character prefix.
    assert all(len(token.digest) == 128 for token in AuthToken.objects.all())


def test_a_database_without_drf_tokens_is_left_as_it_is(transactional_db, django_user_model):
    django_user_model.objects.create_user("carol", password="carol-pass-123")
    with connection.schema_editor() as schema_editor:
        carry.carry_drf_tokens(apps, schema_editor)
    assert AuthToken.objects.count() == 0
