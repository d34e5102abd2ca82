"""The friendly 404, 403 and 500 pages with DEBUG off: no traceback, no settings, a way back."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.urls("tests.kgbweb.urls_failing")
def test_a_failing_view_gets_the_500_page_without_details(db, settings):
    assert settings.DEBUG is False
    client = Client(raise_request_exception=False)
    response = client.get("/fail/")
    body = response.content.decode()
    assert (response.status_code, 'id="server-error"' in body) == (500, True)
    assert "RuntimeError" not in body and "a failure no user" not in body and "Traceback" not in body


def test_an_unknown_page_gets_the_404_page(client, db):
    response = client.get("/no/such/thing/")
    body = response.content.decode()
    assert (response.status_code, 'id="not-found"' in body, "/no/such/thing/" in body) == (404, True, True)
    assert "Traceback" not in body and "urlpatterns" not in body


def test_an_unknown_api_object_is_a_json_404(client, db):
    response = client.get("/api/runs/999999999/")
    assert (response.status_code, response.json()) == (404, {"detail": "No Run matches the given query."})
