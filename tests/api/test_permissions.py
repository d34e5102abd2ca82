"""Every endpoint as anonymous, another user, the owner and staff: exact statuses, exact visible objects, and
refused writes that changed nothing."""

from __future__ import annotations

import json
import re

import pytest
from rest_framework.test import APIClient

from evaluation.models import Run, RunStatus
from leaderboard.models import Kernel, Method, Submission

ROLES = ("anonymous", "other", "owner", "staff")


def ids(response) -> list:
    body = response.json()
    items = body["results"] if isinstance(body, dict) and "results" in body else body
    return [item.get("id", item.get("slug", item.get("operator_id"))) for item in items]


# --- Reads ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_catalog_reads_are_public(clients, world, role):
    client = clients[role]
    assert ids(client.get("/api/operators/")) == ["aten::cos", "aten::sin", "vllm13::rms_norm"]
    assert ids(client.get("/api/operators/?set=kgb-mc")) == ["aten::cos", "aten::sin"]
    assert ids(client.get("/api/operators/?source=vllm")) == ["vllm13::rms_norm"]
    detail = client.get("/api/operators/aten::cos/")
    assert detail.status_code == 200
    assert [entry["name"] for entry in detail.json()["entry_points"]] == ["cos", "cos_out"]
    assert detail.json()["sets"] == (["curated-draft", "kgb-mc", "kgb-ms"] if role == "staff" else ["kgb-mc", "kgb-ms"])
    chips = client.get("/api/chips/").json()["results"]
    assert [(chip["slug"], chip["live"], chip["queued_runs"]) for chip in chips] == [("cpu-interpreter", False, 0)]


@pytest.mark.parametrize(
    ("role", "expected_sets", "draft_status"),
    [
        ("anonymous", ["kgb-ms", "kgb-mc"], 404),
        ("other", ["kgb-ms", "kgb-mc"], 404),
        ("owner", ["kgb-ms", "kgb-mc"], 404),
        ("staff", ["kgb-ms", "kgb-mc", "curated-draft"], 200),
    ],
)
def test_unpublished_operator_sets_are_for_staff(clients, world, role, expected_sets, draft_status):
    assert ids(clients[role].get("/api/operator-sets/")) == expected_sets
    assert clients[role].get("/api/operator-sets/curated-draft/").status_code == draft_status


@pytest.mark.parametrize(
    ("role", "sees_private"), [("anonymous", False), ("other", False), ("owner", True), ("staff", True)]
)
def test_private_objects_are_seen_by_owner_and_staff_only(clients, world, role, sees_private):
    client = clients[role]
    public, private = world["public"].pk, world["private"].pk
    kernels, runs = world["kernels"], world["runs"]

    assert ids(client.get("/api/submissions/")) == ([private, public] if sees_private else [public])
    assert ids(client.get("/api/kernels/")) == sorted(
        [kernels["public_cos"].pk, kernels["public_sin"].pk] + ([kernels["private_cos"].pk] if sees_private else [])
    )
    assert sorted(ids(client.get("/api/runs/"))) == sorted(
        [runs["public_cos"].pk, runs["public_sin"].pk] + ([runs["private_cos"].pk] if sees_private else [])
    )
    method_labels = [item["label"] for item in client.get("/api/methods/").json()["results"]]
    assert method_labels == (["Agent + M1", "Secret"] if sees_private else ["Agent + M1"])

    hidden = 200 if sees_private else 404
    assert client.get(f"/api/submissions/{private}/").status_code == hidden
    assert client.get(f"/api/submissions/{private}/progress/").status_code == hidden
    assert client.get(f"/api/kernels/{kernels['private_cos'].pk}/").status_code == hidden
    assert client.get(f"/api/runs/{runs['private_cos'].pk}/").status_code == hidden
    assert client.get(f"/api/methods/{world['private_method'].pk}/").status_code == hidden
    if sees_private:
        code = client.get(f"/api/kernels/{kernels['private_cos'].pk}/").json()["source_code"]
        assert code.startswith("# secret\n")

    public_kernel = client.get(f"/api/kernels/{kernels['public_cos'].pk}/").json()
    assert public_kernel["source_code"] == kernels["public_cos"].source_code
    assert [(run["chip"], run["status"]) for run in public_kernel["runs"]] == [("cpu-interpreter", "passed")]
    run = client.get(f"/api/runs/{runs['public_sin'].pk}/").json()
    assert (run["status"], run["reason"], run["case_results"]) == (
        "failed_correctness",
        "cos[2]: wrong",
        [{"case_id": "cos[0]", "passed": True}],
    )

    exported = json.loads(b"".join(client.get("/api/exports/runs/?format=json").streaming_content))
    assert sorted(row["id"] for row in exported) == sorted(
        [runs["public_cos"].pk, runs["public_sin"].pk] + ([runs["private_cos"].pk] if sees_private else [])
    )
    dataset = b"".join(client.get("/api/exports/dataset.jsonl").streaming_content).decode().splitlines()
    assert sorted(json.loads(line)["kernel_id"] for line in dataset) == sorted(
        [kernels["public_cos"].pk, kernels["public_sin"].pk]
    )  # the dataset is public kernels only, for everyone


@pytest.mark.parametrize("role", ROLES)
def test_leaderboard_counts_public_submissions_only_for_everyone(clients, world, role):
    board = clients[role].get("/api/leaderboards/?chip=cpu-interpreter&set=kgb-mc").json()
    assert (board["chip"], board["set"], board["views"]) == ("cpu-interpreter", "kgb-mc", ["overall", "aten"])
    assert [(row["rank"], row["method"]["label"]) for row in board["rows"]] == [(1, "Agent + M1")]
    overall = board["rows"][0]["summaries"]["overall"]
    assert (overall["solved"], overall["operators_total"], overall["accuracy_pct"], overall["tokens_total"]) == (
        1,
        2,
        50.0,
        1500,
    )


@pytest.mark.parametrize(("role", "status"), [("anonymous", 401), ("other", 200), ("owner", 200), ("staff", 200)])
def test_me(clients, world, role, status):
    response = clients[role].get("/api/me/")
    assert response.status_code == status
    if status == 200:
        assert response.json()["username"] == {"other": "bob", "owner": "alice", "staff": "carol"}[role]


# --- Writes -----------------------------------------------------------------------------------------------


def counts() -> tuple[int, int, int, int]:
    return Method.objects.count(), Submission.objects.count(), Kernel.objects.count(), Run.objects.count()


@pytest.mark.parametrize(("role", "status"), [("anonymous", 401), ("other", 201), ("owner", 201), ("staff", 201)])
def test_create_method(clients, world, role, status):
    before = counts()
    response = clients[role].post("/api/methods/", {"scaffold": "New Agent", "model": "X"}, format="json")
    assert response.status_code == status
    if status == 401:
        assert counts() == before
        return
    assert response.json()["owner"] == {"other": "bob", "owner": "alice", "staff": "carol"}[role]
    again = clients[role].post("/api/methods/", {"scaffold": "New Agent", "model": "X"}, format="json")
    assert (again.status_code, again.json()["id"]) == (200, response.json()["id"])
    assert counts() == (before[0] + 1, *before[1:])


SUBMISSION = {
    "scaffold": "Script Agent",
    "model": "S1",
    "chips": ["cpu-interpreter"],
    "kernels": [
        {
            "operator_id": "aten::sin",
            "code": "def sin(self):\n    return self\n",
            "input_tokens": 10,
            "output_tokens": 5,
        }
    ],
}


@pytest.mark.parametrize(("role", "status"), [("anonymous", 401), ("other", 201), ("owner", 201), ("staff", 201)])
def test_create_submission_from_json(clients, world, role, status):
    before = counts()
    response = clients[role].post("/api/submissions/", SUBMISSION, format="json")
    assert response.status_code == status
    if status == 401:
        assert counts() == before
        return
    body = response.json()
    assert (body["method"]["label"], body["visibility"], body["kernel_count"]) == ("Script Agent + S1", "public", 1)
    assert [(run["operator_id"], run["chip"], run["status"]) for run in body["progress"]["runs"]] == [
        ("aten::sin", "cpu-interpreter", "queued")
    ]
    kernel = Kernel.objects.get(submission_id=body["id"])
    assert (kernel.total_tokens, kernel.input_tokens) == (15, 10)
    assert counts() == (before[0] + 1, before[1] + 1, before[2] + 1, before[3] + 1)


def test_a_rejected_submission_names_every_problem_and_saves_nothing_not_even_its_method(clients, world):
    before = counts()
    payload = dict(
        SUBMISSION,
        scaffold="Brand New",
        kernels=[
            {"operator_id": "aten::cos", "code": "def cos(self):\n    return self\n", "filename": "aten__cos.py"},
            {"operator_id": "aten::nope", "code": "x = 1\n", "filename": "aten__nope.py"},
        ],
    )
    response = clients["owner"].post("/api/submissions/", payload, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "problems": [
            "aten__cos.py: missing entry point(s) cos_out required by aten::cos",
            "aten__nope.py: unknown operator 'aten::nope'",
        ]
    }
    assert counts() == before
    unknown_chip = clients["owner"].post("/api/submissions/", dict(SUBMISSION, chips=["tpu-v9"]), format="json")
    assert (unknown_chip.status_code, unknown_chip.json()) == (400, {"problems": ["unknown or inactive chip 'tpu-v9'"]})
    assert counts() == before


def test_a_submission_may_not_use_another_users_method(clients, world):
    before = counts()
    payload = {"method_id": world["method"].pk, "chips": ["cpu-interpreter"], "kernels": SUBMISSION["kernels"]}
    response = clients["other"].post("/api/submissions/", payload, format="json")
    assert (response.status_code, response.json()) == (400, {"problems": ["method Agent + M1 belongs to another user"]})
    private = clients["other"].post(
        "/api/submissions/", dict(payload, method_id=world["private_method"].pk), format="json"
    )
    assert (private.status_code, private.json()) == (
        400,
        {"problems": [f"unknown method {world['private_method'].pk}"]},
    )
    assert counts() == before
    own = clients["owner"].post("/api/submissions/", payload, format="json")
    assert (own.status_code, own.json()["method"]["id"]) == (201, world["method"].pk)


@pytest.mark.parametrize(("role", "status"), [("anonymous", 401), ("other", 403), ("owner", 403), ("staff", 201)])
def test_rerun_is_for_staff(clients, world, role, status):
    run = world["runs"]["public_cos"]
    before = counts()
    response = clients[role].post(f"/api/runs/{run.pk}/rerun/", {}, format="json")
    assert response.status_code == status
    if status != 201:
        assert counts() == before
        return
    new_run = Run.objects.get(pk=response.json()["id"])
    assert (new_run.kernel_id, new_run.chip_id, new_run.status) == (run.kernel_id, run.chip_id, RunStatus.QUEUED)
    assert Run.objects.get(pk=run.pk).status == RunStatus.PASSED  # the old verdict stays
    assert counts() == (*before[:3], before[3] + 1)


def test_staff_cannot_rerun_what_does_not_exist(clients, world):
    assert clients["staff"].post("/api/runs/999999/rerun/", {}, format="json").status_code == 404


@pytest.mark.parametrize(("role", "status"), [("anonymous", 401), ("other", 403), ("owner", 403), ("staff", 200)])
def test_bundle_export_is_for_staff_and_refusal_claims_nothing(clients, world, cpu_chip, role, status):
    queued = Run.objects.create(kernel=world["kernels"]["public_cos"], chip=cpu_chip, operator_version=1)
    response = clients[role].post("/api/bundles/export/", {"chip": "cpu-interpreter"}, format="json")
    assert response.status_code == status
    queued.refresh_from_db()
    if status != 200:
        assert (queued.status, queued.lease) == (RunStatus.QUEUED, "")
        return
    assert [job["run_id"] for job in response.json()["jobs"]] == [queued.pk]
    assert (queued.status, queued.lease) == (RunStatus.RUNNING, response.json()["bundle_id"])


@pytest.mark.parametrize(("role", "status"), [("anonymous", 401), ("other", 403), ("owner", 403), ("staff", 400)])
def test_bundle_import_is_for_staff(clients, world, role, status):
    response = clients[role].post("/api/bundles/import/?chip=cpu-interpreter", {"format": "nope"}, format="json")
    assert response.status_code == status


@pytest.mark.parametrize(("role", "status"), [("anonymous", 401), ("other", 405), ("owner", 405), ("staff", 405)])
def test_nothing_is_edited_or_deleted_through_the_api(clients, world, role, status):
    before = counts()
    submission, method = world["public"], world["method"]
    for url in (
        f"/api/submissions/{submission.pk}/",
        f"/api/methods/{method.pk}/",
        f"/api/kernels/{world['kernels']['public_cos'].pk}/",
        f"/api/runs/{world['runs']['public_cos'].pk}/",
    ):
        assert clients[role].delete(url).status_code == (401 if role == "anonymous" else 405), url
        assert clients[role].patch(url, {"visibility": "private"}, format="json").status_code == status, url
    assert counts() == before
    submission.refresh_from_db()
    assert submission.visibility == "public"


def test_token_page_shows_a_new_key_once_and_stores_only_its_digest(client, user, other_user):
    from knox.crypto import hash_token
    from knox.models import AuthToken

    assert client.get("/api/token/").status_code == 302
    client.force_login(user)
    page = client.get("/api/token/")
    assert (page.status_code, b'id="no-token"' in page.content) == (200, True)
    created = client.post("/api/token/", {"action": "create"})
    key = re.search(r'<pre id="api-token">([0-9a-f]+)</pre>', created.content.decode())[1]
    assert created["Cache-Control"] == "max-age=0, no-cache, no-store, must-revalidate, private"
    stored = AuthToken.objects.get(user=user)
    assert (len(key), stored.token_key, stored.digest) == (64, key[:15], hash_token(key))
    assert key.encode() not in client.get("/api/token/").content  # shown once: afterwards only the prefix
    assert f"{key[:15]}…".encode() in client.get("/api/token/").content
    assert APIClient().get("/api/me/", HTTP_AUTHORIZATION=f"Token {key}").json()["username"] == "alice"
    client.post("/api/token/", {"action": "create"})
    assert AuthToken.objects.filter(user=user).count() == 2
    # Another user's prefix revokes nothing of theirs.
    AuthToken.objects.create(user=other_user)
    other_prefix = AuthToken.objects.get(user=other_user).token_key
    client.post("/api/token/", {"action": "revoke", "token": other_prefix})
    assert (AuthToken.objects.filter(user=user).count(), AuthToken.objects.filter(user=other_user).count()) == (2, 1)
    client.post("/api/token/", {"action": "revoke", "token": stored.token_key})
    assert list(AuthToken.objects.filter(user=user).exclude(pk=stored.pk)) == list(AuthToken.objects.filter(user=user))
    assert APIClient().get("/api/me/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    client.post("/api/token/", {"action": "revoke"})
    assert (AuthToken.objects.filter(user=user).count(), AuthToken.objects.filter(user=other_user).count()) == (0, 1)


def test_obtain_token_with_password(client, user):
    from knox.models import AuthToken

    response = client.post("/api/token/obtain/", {"username": "alice", "password": "alice-pass-123"})
    assert response.status_code == 200
    key = response.json()["token"]
    assert response.json() == {"token": key, "username": "alice"}
    assert AuthToken.objects.get(user=user).token_key == key[:15]
    assert client.post("/api/token/obtain/", {"username": "alice", "password": "wrong"}).status_code == 400
    assert AuthToken.objects.filter(user=user).count() == 1


def test_users_are_throttled(clients, world, monkeypatch):
    from rest_framework.throttling import UserRateThrottle

    monkeypatch.setattr(UserRateThrottle, "rate", "3/min", raising=False)
    statuses = [clients["owner"].get("/api/operators/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    assert clients["other"].get("/api/operators/").status_code == 200  # per user, not global
