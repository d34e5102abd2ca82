"""Every login path locks out after repeated wrong passwords (django-axes), the token endpoint is throttled
per address, and Django's password validators guard sign-up and password change. Each refused request is
checked to have changed nothing: no session, no last_login, no token, no user, the old password kept."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from knox.models import AuthToken
from rest_framework.throttling import ScopedRateThrottle

WRONG_TRIES = 40


@pytest.fixture(autouse=True)
def fresh_cache(db):
    cache.clear()  # throttle counts (the database cache) from one test must not reach the next
    yield
    cache.clear()


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("carol", password="carol-pass-123", is_staff=True, is_superuser=True)


def assert_not_logged_in(client, user) -> None:
    assert "_auth_user_id" not in client.session
    user.refresh_from_db()
    assert user.last_login is None


def test_site_login_locks_out_after_wrong_passwords(client, user):
    for _ in range(WRONG_TRIES):
        client.post("/accounts/login/", {"username": "alice", "password": "not-her-password"})
    response = client.post("/accounts/login/", {"username": "alice", "password": "alice-pass-123"})
    assert (response.status_code, b'id="locked-out"' in response.content) == (429, True)
    assert_not_logged_in(client, user)
    # The lockout is for this account from this address: alice elsewhere still gets in, and so does bob here.
    elsewhere = Client()
    response = elsewhere.post(
        "/accounts/login/", {"username": "alice", "password": "alice-pass-123"}, REMOTE_ADDR="192.0.2.7"
    )
    assert (response.status_code, response["Location"]) == (302, "/")


def test_a_few_wrong_passwords_then_the_right_one_logs_in(client, user):
    for _ in range(4):  # under the limit of 5
        assert client.post("/accounts/login/", {"username": "alice", "password": "nope"}).status_code == 200
    response = client.post("/accounts/login/", {"username": "alice", "password": "alice-pass-123"})
    assert (response.status_code, client.session["_auth_user_id"]) == (302, str(user.pk))
    assert AccessAttempt.objects.filter(username="alice").count() == 0  # a success resets the count


def test_admin_login_locks_out_after_wrong_passwords(client, staff):
    for _ in range(WRONG_TRIES):
        client.post("/admin/login/", {"username": "carol", "password": "wrong", "next": "/admin/"})
    response = client.post("/admin/login/", {"username": "carol", "password": "carol-pass-123", "next": "/admin/"})
    assert response.status_code == 429
    assert_not_logged_in(client, staff)
    assert client.get("/admin/").status_code == 302  # still sent to the login page


def test_token_obtain_locks_out_after_wrong_passwords(client, user, monkeypatch):
    # The per-address throttle out of the way, to see the lockout alone.
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"token_obtain": "1000/min"})
    statuses = [
        client.post("/api/token/obtain/", {"username": "alice", "password": "wrong"}).status_code
        for _ in range(WRONG_TRIES)
    ]
    assert statuses == [400] * 4 + [429] * (WRONG_TRIES - 4)  # the fifth failure locks
    response = client.post("/api/token/obtain/", {"username": "alice", "password": "alice-pass-123"})
    assert response.status_code == 429
    assert response.json() == {
        "detail": "Too many failed logins for this account from your address: try again "
        "in 15 minutes, or reset your password."
    }
    assert response["Retry-After"] == "900"
    assert AuthToken.objects.count() == 0
    assert_not_logged_in(client, user)


def test_token_obtain_is_throttled_per_address(client, user):
    statuses = [
        client.post("/api/token/obtain/", {"username": f"guess{i}", "password": "x"}).status_code for i in range(12)
    ]
    assert statuses == [400] * 10 + [429] * 2  # 10/min from one address, whatever the usernames
    response = client.post("/api/token/obtain/", {"username": "alice", "password": "alice-pass-123"})
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert "throttled" in response.json()["detail"].lower()
    assert AuthToken.objects.count() == 0


@pytest.mark.parametrize(
    "password, message",
    [
        ("password", "This password is too common."),
        ("48213957", "This password is entirely numeric."),
        ("short1", "This password is too short. It must contain at least 8 characters."),
        ("dana-the-user", "The password is too similar to the username."),
    ],
)
def test_signup_runs_the_password_validators(client, db, password, message):
    response = client.post(
        reverse("leaderboard:signup"), {"username": "dana-the-user", "password1": password, "password2": password}
    )
    assert response.status_code == 200
    assert message in response.content.decode().replace("&#x27;", "'")
    assert not get_user_model().objects.filter(username="dana-the-user").exists()
    assert "_auth_user_id" not in client.session


def test_password_change_runs_the_password_validators(client, user):
    client.force_login(user)
    response = client.post(
        "/accounts/password_change/",
        {"old_password": "alice-pass-123", "new_password1": "12345678", "new_password2": "12345678"},
    )
    assert response.status_code == 200
    assert "This password is entirely numeric." in response.content.decode()
    user.refresh_from_db()
    assert user.check_password("alice-pass-123")
    better = "a-much-better-one-9"
    response = client.post(
        "/accounts/password_change/",
        {"old_password": "alice-pass-123", "new_password1": better, "new_password2": better},
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a-much-better-one-9")


def test_behind_a_proxy_lockouts_count_by_the_forwarded_address_the_proxy_added(client, user, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    for _ in range(5):  # the attacker forges a different left-most address each time: it does not help
        client.post(
            "/accounts/login/",
            {"username": "alice", "password": "wrong"},
            HTTP_X_FORWARDED_FOR=f"10.9.9.{_}, 198.51.100.4",
            REMOTE_ADDR="127.0.0.1",
        )
    refused = client.post(
        "/accounts/login/",
        {"username": "alice", "password": "alice-pass-123"},
        HTTP_X_FORWARDED_FOR="10.1.1.1, 198.51.100.4",
        REMOTE_ADDR="127.0.0.1",
    )
    assert refused.status_code == 429
    assert_not_logged_in(client, user)
    # Another client behind the same proxy is not locked out with them.
    other = Client().post(
        "/accounts/login/",
        {"username": "alice", "password": "alice-pass-123"},
        HTTP_X_FORWARDED_FOR="203.0.113.9",
        REMOTE_ADDR="127.0.0.1",
    )
    assert other.status_code == 302


def test_without_a_proxy_a_forged_forwarded_header_changes_nothing(client, user):
    for index in range(5):
        client.post(
            "/accounts/login/", {"username": "alice", "password": "wrong"}, HTTP_X_FORWARDED_FOR=f"10.9.9.{index}"
        )
    refused = client.post(
        "/accounts/login/", {"username": "alice", "password": "alice-pass-123"}, HTTP_X_FORWARDED_FOR="10.1.1.1"
    )
    assert refused.status_code == 429
    assert_not_logged_in(client, user)
