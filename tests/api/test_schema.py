"""The OpenAPI schema is valid, its docs are served from our own static files, and a bounded property-based
fuzz of every operation (schemathesis, through the WSGI app) provokes no server error."""

from __future__ import annotations

import json
import os

import pytest
import schemathesis
from django.core.management import call_command
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from knox.models import AuthToken
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle
from schemathesis.checks import not_a_server_error


def load_schema() -> schemathesis.BaseSchema:
    """The schema drf-spectacular serves, generated here rather than fetched: at collection time there is no
    database, and the schema endpoint's throttle counts in the database cache. Calls go through the WSGI app."""
    from drf_spectacular.generators import SchemaGenerator

    raw = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))
    loaded = schemathesis.openapi.from_dict(raw)
    loaded.app = get_wsgi_application()
    return loaded


schema = load_schema()
# Examples per operation: a few in every run; KGB_FUZZ_EXAMPLES=50 for a deeper search before a release.
FUZZ_EXAMPLES = int(os.environ.get("KGB_FUZZ_EXAMPLES", 2))


def test_schema_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    for path in (
        "/api/operators/{operator_id}/prompt/:",
        "/api/submissions/import/:",
        "/api/leaderboards/:",
        "/api/runs/{id}/rerun/:",
        "/api/bundles/import/:",
        "/api/exports/dataset.jsonl:",
    ):
        assert path in text


def test_docs_use_self_hosted_assets(client, db):
    page = client.get("/api/docs/").content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn.jsdelivr" not in page and "unpkg.com" not in page
    assert client.get("/api/schema/").status_code == 200


@pytest.fixture
def unthrottled(monkeypatch):
    monkeypatch.setattr(AnonRateThrottle, "rate", "100000/min", raising=False)
    monkeypatch.setattr(UserRateThrottle, "rate", "100000/min", raising=False)


@pytest.mark.slow
@schema.parametrize()
@hypothesis_settings(
    max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_fuzz_finds_no_server_error(case, world, staff_user, unthrottled):
    headers = {"Authorization": f"Token {AuthToken.objects.create(user=staff_user)[1]}"}
    case.call_and_validate(headers=headers, checks=[not_a_server_error])


@pytest.mark.slow
@schema.include(method="GET").parametrize()
@hypothesis_settings(
    max_examples=max(1, FUZZ_EXAMPLES // 2), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_anonymous_fuzz_of_reads_finds_no_server_error(case, world, unthrottled):
    case.call_and_validate(checks=[not_a_server_error])


@pytest.mark.parametrize("path", ["/api/", "/api/operators/", "/api/leaderboards/?set=kgb-mc&chip=cpu-interpreter"])
def test_browsable_api_pages_render(client, world, path):
    response = client.get(path, HTTP_ACCEPT="text/html")
    assert (response.status_code, response["Content-Type"]) == (200, "text/html; charset=utf-8")
