"""The site as researchers meet it: the first screen, citable boards and their downloads, method and operator
pages, uploads through the one intake, the run page's failure report; each as anonymous, another user, the
owner and staff where it differs."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from evaluation.models import Run, RunStatus, Worker
from leaderboard import best_verdicts, selectors
from leaderboard.models import Kernel, Method, PaperResult, Submission, Visibility
from tests.leaderboard.board_data import make_world

ROLES = ("anonymous", "other", "owner", "staff")
COS = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"


@pytest.fixture(autouse=True)
def fresh_board_cache():
    selectors.clear_board_memo()


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice", password=None)


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user("bob", password=None)


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user("carol", password=None, is_staff=True)


@pytest.fixture
def world(user, other_user):
    return make_world(owner=user, other=other_user)


@pytest.fixture
def as_role(client, user, other_user, staff_user):
    def login(role: str):
        if role != "anonymous":
            client.force_login({"other": other_user, "owner": user, "staff": staff_user}[role])
        return client

    return login


def method_rows(html: str) -> list[str]:
    return re.findall(r'<td class="method"><a href="/methods/\d+/">([^<]+)</a>', html)


def counts() -> tuple[int, int, int, int]:
    return (Method.objects.count(), Submission.objects.count(), Kernel.objects.count(), Run.objects.count())


# --- The first screen -------------------------------------------------------------------------------------


def test_first_screen_explains_and_links_the_paper_and_protocol(world, client):
    html = client.get("/").content.decode()
    assert 'id="intro"' in html and "Triton" in html
    assert 'href="https://arxiv.org/abs/2607.27231"' in html and 'href="/about/#protocol"' in html
    for anchor in ("accuracy", "speedup", "fast-p", "baseline", "rank"):
        assert f'href="/about/#{anchor}"' in html
    about = client.get("/about/").content.decode()
    for anchor in ("accuracy", "speedup", "fast-p", "baseline", "rank", "protocol"):
        assert f'id="{anchor}"' in about


def test_board_opens_on_a_chip_and_set_with_verified_rows(world, client):
    # Only the CPU interpreter has public verdicts: the board opens there, not on the empty reference chip.
    doomed = Run.objects.exclude(chip=world.chips["cpu-interpreter"])
    with best_verdicts.kept(runs=list(doomed.values_list("pk", flat=True))):
        doomed.delete()
    judged_cpu = Run.objects.create(
        kernel=world.runs["slow_cos"].kernel,
        chip=world.chips["cpu-interpreter"],
        operator_version=1,
        status=RunStatus.PASSED,
        cases_total=2,
        cases_passed=2,
    )
    best_verdicts.runs_changed(run_ids=[judged_cpu.pk])
    response = client.get("/")
    assert (response.context["chip"].slug, response.context["operator_set"].slug) == ("cpu-interpreter", "kgb-ms")
    assert method_rows(response.content.decode()) == ["Pass@1 + GLM-5.0"]
    assert response.context["show_paper"] is False
    assert judged_cpu.pk


def test_without_verified_rows_the_first_screen_shows_the_paper_table_labelled(world, client):
    with best_verdicts.kept(runs=list(Run.objects.values_list("pk", flat=True))):
        Run.objects.all().delete()
    PaperResult.objects.create(
        table="MS",
        method="Claude Code",
        model="Opus-4.6",
        view="overall",
        platform="nvidia-a100",
        accuracy_pct=87,
        speedup_geomean=0.95,
    )
    html = client.get("/").content.decode()
    assert "Reported in the paper, not verified here" in html and '<tr class="paper"><td>Claude Code</td>' in html
    assert 'id="no-rows"' in html and method_rows(html) == []
    assert "Reported in the paper" not in client.get("/?paper=0").content.decode()


def test_an_anonymous_crawl_from_the_first_screen_reaches_methods_and_runs(world, client):
    seen, queue = set(), ["/"]
    while queue and len(seen) < 60:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code == 200, url
        links = re.findall(r'href="(/(?:methods|runs|operators|submissions|boards)/[^"#?]*)', response.content.decode())
        queue.extend(link for link in links if link not in seen)
    assert any(url.startswith("/methods/") for url in seen)
    assert any(url.startswith("/runs/") for url in seen)


# --- Citable boards ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_ranks_share_where_intervals_overlap(world, as_role, role):
    response = as_role(role).get("/?chip=nvidia-h200&set=kgb-ms")
    # 3/4 (30-95%) and 1/4 (5-70%) overlap: a shared first rank, shown as "=1" on both rows.
    assert [(str(row.method), row.rank.label) for row in response.context["rows"]] == [
        ("Fast Agent + Opus-4.6", "=1"),
        ("Pass@1 + GLM-5.0", "=1"),
    ]
    assert response.content.decode().count('<td class="rank tied"') == 2


def test_csv_and_json_downloads_are_the_view_on_screen(world, client):
    view = "/?chip=nvidia-h200&set=kgb-ms&kind=agent&kind=pass_at_k&sort=-overall.speedup"
    page = client.get(view)
    html = page.content.decode()
    assert (
        'href="?chip=nvidia-h200&amp;set=kgb-ms&amp;kind=agent&amp;kind=pass_at_k&amp;sort=-overall.speedup'
        '&amp;format=csv" id="download-csv"'
    ) in html
    download = client.get(view + "&format=csv")
    assert download["Content-Type"] == "text/csv; charset=utf-8"
    assert download["Content-Disposition"] == 'attachment; filename="kgb-ms-kgb-ms-nvidia-h200.csv"'
    rows = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert [row["method"] for row in rows] == method_rows(html) == ["Pass@1 + GLM-5.0", "Fast Agent + Opus-4.6"]
    assert [
        (row["rank"], row["rank_tied"], row["overall_accuracy_pct"], row["overall_solved"], row["overall_speedup"])
        for row in rows
    ] == [("1", "True", "25.0", "1", "1.5"), ("1", "True", "75.0", "3", "1.0")]
    body = json.loads(client.get(view + "&format=json").content)
    assert body["view"]["sort"] == "-overall.speedup" and body["view"]["kinds"] == ["agent", "pass_at_k"]
    assert [(row["rank"], row["rank_tied"], row["overall_speedup"]) for row in body["rows"]] == [
        (1, True, 1.5),
        (1, True, 1.0),
    ]


def test_unknown_is_a_dash_never_zero(world, client):
    # On the interpreter speedups mean nothing: fast_p and speedups are unknown, and so in the downloads.
    judged_cpu = Run.objects.create(
        kernel=world.runs["slow_cos"].kernel,
        chip=world.chips["cpu-interpreter"],
        operator_version=1,
        status=RunStatus.PASSED,
        cases_total=2,
        cases_passed=2,
    )
    best_verdicts.runs_changed(run_ids=[judged_cpu.pk])
    html = client.get("/?chip=cpu-interpreter&set=kgb-ms").content.decode()
    row = re.search(r'<td class="method">.*?</tr>', html, re.S)[0]
    assert "0%" not in row and row.count(">–<") >= 3
    rows = list(
        csv.DictReader(io.StringIO(client.get("/?chip=cpu-interpreter&set=kgb-ms&format=csv").content.decode()))
    )
    assert (rows[0]["fast_1"], rows[0]["overall_speedup"], rows[0]["tokens_per_pass"]) == ("", "", "500.0")
    cost = list(
        csv.DictReader(io.StringIO(client.get("/boards/cost/?chip=cpu-interpreter&format=csv").content.decode()))
    )
    assert cost[0]["tokens_total"] == "500"


def test_tabs_keep_chip_set_and_filters(world, client):
    html = client.get("/?chip=platform-a&set=kgb-mc&kind=agent&model=opus").content.decode()
    carried = "chip=platform-a&amp;set=kgb-mc&amp;kind=agent&amp;model=opus"
    for path in ("/", "/boards/multi-chip/", "/boards/cost/", "/boards/matched/", "/boards/portability/", "/plots/"):
        assert f'href="{path}?{carried}"' in html, path
    multi = client.get(f"/boards/multi-chip/?{carried.replace('&amp;', '&')}")
    assert multi.context["chip"].slug == "platform-a" and multi.context["operator_set"].slug == "kgb-mc"


def test_multi_chip_board_is_sorted_by_score_with_ranks(world, client):
    response = client.get("/boards/multi-chip/?set=kgb-mc")
    rows = [(str(row.method), round(row.score, 2), row.rank.label) for row in response.context["rows"]]
    # Fast: H200 100%, Platform A 50%, CPU 0% -> 50.0; Pass@1: 50%, 50%, 0% -> 33.33.
    assert rows == [("Fast Agent + Opus-4.6", 50.0, "=1"), ("Pass@1 + GLM-5.0", 33.33, "=1")]
    rows_csv = list(
        csv.DictReader(io.StringIO(client.get("/boards/multi-chip/?set=kgb-mc&format=csv").content.decode()))
    )
    assert [(row["method"], row["score_accuracy_pct"], row["platform-a_speedup"]) for row in rows_csv] == [
        ("Fast Agent + Opus-4.6", "50.0", "1.2"),
        ("Pass@1 + GLM-5.0", "33.3", "0.8"),
    ]


@pytest.mark.parametrize("role", ROLES)
def test_portability_cells_link_to_their_runs_and_attempted_only(world, as_role, role):
    fast = world.methods["fast"]
    client = as_role(role)
    response = client.get(f"/boards/portability/?set=kgb-ms&method={fast.pk}")
    links = {
        (line["operator_id"], cell["chip"].slug): cell["run_id"]
        for line in response.context["matrix"]
        for cell in line["cells"]
        if cell["run_id"]
    }
    assert links == {
        ("aten::cos", "nvidia-h200"): world.runs["fast_cos"].pk,
        ("aten::add", "nvidia-h200"): world.runs["fast_add"].pk,
        ("vllm13::rms_norm", "nvidia-h200"): world.runs["fast_rms"].pk,
        ("cublas::cublasSaxpy_v2", "nvidia-h200"): world.runs["fast_saxpy"].pk,
        ("aten::cos", "platform-a"): world.runs["fast_cos_ascend"].pk,
        ("aten::add", "platform-a"): world.runs["fast_add_ported"].pk,
    }
    assert f'href="/runs/{world.runs["fast_cos"].pk}/"' in response.content.decode()
    assert world.runs["private_add"].pk not in links.values()  # private work never links from a public board
    attempted = client.get(f"/boards/portability/?set=kgb-ms&method={fast.pk}&attempted=1")
    assert len(attempted.context["matrix"]) == 4 and 'id="attempted-toggle"' in attempted.content.decode()


@pytest.mark.parametrize("role", ROLES)
def test_operator_page_ranks_methods(world, as_role, role):
    response = as_role(role).get("/operators/aten::cos/?chip=nvidia-h200")
    ranking = [
        (str(entry.method), entry.passed, entry.rank.label if entry.rank else None, entry.run.pk)
        for entry in response.context["ranking"]
    ]
    # No speedup intervals: points 2.0 and 1.5 are apart, so the ranks differ; the private method is absent.
    assert ranking == [
        ("Fast Agent + Opus-4.6", True, "1", world.runs["fast_cos"].pk),
        ("Pass@1 + GLM-5.0", True, "2", world.runs["slow_cos"].pk),
    ]
    world.runs["fast_cos"].speedup_ci_low, world.runs["fast_cos"].speedup_ci_high = 1.4, 2.6
    world.runs["fast_cos"].save(update_fields=["speedup_ci_low", "speedup_ci_high"])
    tied = as_role(role).get("/operators/aten::cos/?chip=nvidia-h200")
    assert [entry.rank.label for entry in tied.context["ranking"]] == ["=1", "=1"]
    add = as_role(role).get("/operators/aten::add/?chip=nvidia-h200")
    assert [(str(e.method), e.passed, e.rank) for e in add.context["ranking"]] == [
        ("Fast Agent + Opus-4.6", True, add.context["ranking"][0].rank),
        ("Pass@1 + GLM-5.0", False, None),
    ]


# --- Methods ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("role", "listed"), [("anonymous", False), ("other", False), ("owner", True), ("staff", True)])
def test_a_method_whose_only_work_is_private_is_not_listed(world, as_role, role, listed, user):
    only_private = Method.objects.create(scaffold="Quiet Agent", model="Q", owner=user)
    Submission.objects.create(owner=user, method=only_private, visibility=Visibility.PRIVATE)
    client = as_role(role)
    assert client.get(f"/methods/{only_private.pk}/").status_code == (200 if listed else 404)
    api = [item["id"] for item in client.get("/api/methods/").json()["results"]]
    assert (only_private.pk in api) is listed


@pytest.mark.parametrize("role", ROLES)
def test_method_page_shows_metadata(world, as_role, role):
    fast = world.methods["fast"]
    Method.objects.filter(pk=fast.pk).update(
        model_version="2026-10-01", paper_url="https://arxiv.org/abs/1", code_url="https://example.org/agent"
    )
    html = as_role(role).get(f"/methods/{fast.pk}/").content.decode()
    assert '<dd id="model-version">2026-10-01</dd>' in html
    assert 'href="https://arxiv.org/abs/1"' in html and 'href="https://example.org/agent"' in html
    assert '<dd id="submitter">alice</dd>' in html
    assert 'id="matrix-link"' in html


# --- My submissions and sign-up ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "expected"),
    [("anonymous", None), ("other", ["slow"]), ("owner", ["fast", "fast_ascend", "private", "secret"]), ("staff", [])],
)
def test_my_submissions_lists_public_and_private_own_work(world, as_role, role, expected):
    response = as_role(role).get("/me/submissions/")
    if expected is None:
        assert response.status_code == 302 and response["Location"] == "/accounts/login/?next=/me/submissions/"
        return
    assert sorted(s.pk for s in response.context["submissions"]) == sorted(world.submissions[k].pk for k in expected)
    if role == "owner":
        html = response.content.decode()
        assert "private (unranked)" in html
        private = next(s for s in response.context["submissions"] if s.pk == world.submissions["private"].pk)
        assert (private.kernel_count, private.run_count, private.finished_count, private.passed_count) == (1, 1, 1, 1)


def test_user_menu_links_home_and_token(world, as_role):
    html = as_role("owner").get("/").content.decode()
    assert '<a href="/me/submissions/" id="menu-my-submissions">My submissions</a>' in html
    assert 'href="/api/token/" id="menu-token"' in html


def test_signup_keeps_next(db, client):
    page = client.get("/accounts/signup/?next=/submit/").content.decode()
    assert '<input type="hidden" name="next" value="/submit/">' in page
    form = {
        "username": "dora",
        "email": "d@example.org",
        "password1": "a-long-pass-42",
        "password2": "a-long-pass-42",
        "next": "/submit/",
    }
    response = client.post("/accounts/signup/", form)
    assert response.status_code == 302 and response["Location"] == "/submit/"
    login_page = client.get("/accounts/login/?next=/submit/").content.decode()
    assert 'href="/accounts/signup/?next=/submit/"' in login_page


def test_signup_refuses_an_outside_next(db, client):
    form = {
        "username": "eve",
        "email": "e@example.org",
        "password1": "a-long-pass-42",
        "password2": "a-long-pass-42",
        "next": "https://evil.example.org/",
    }
    assert client.post("/accounts/signup/", form)["Location"] == "/"


# --- Uploads through the one intake -----------------------------------------------------------------------


def post_single(client, name: str, content: str, **fields):
    data = {
        "scaffold": "New Agent",
        "model": "N1",
        "kind": "agent",
        "chips": ["cpu-interpreter"],
        "visibility": "public",
        "notes": "",
        **fields,
    }
    data["kernel_file"] = io.BytesIO(content.encode())
    data["kernel_file"].name = name
    return client.post("/submit/", data)


def test_single_upload_infers_the_operator_from_the_file_name(world, client, user):
    client.force_login(user)
    response = post_single(client, "aten__cos.py", COS)
    submission = Submission.objects.latest("pk")
    assert response.status_code == 302 and response["Location"] == f"/submissions/{submission.pk}/"
    assert [(k.operator.operator_id, k.filename) for k in submission.kernels.all()] == [("aten::cos", "aten__cos.py")]
    assert str(submission.method) == "New Agent + N1"


def test_an_explicit_operator_wins_over_the_file_name(world, client, user):
    client.force_login(user)
    assert post_single(client, "my_kernel.py", COS, operator="aten::cos").status_code == 302
    assert [(k.operator.operator_id, k.filename) for k in Submission.objects.latest("pk").kernels.all()] == [
        ("aten::cos", "my_kernel.py")
    ]


@pytest.mark.parametrize(
    ("name", "content", "fields", "problems"),
    [
        (
            "my_kernel.py",
            COS,
            {},
            [
                "my_kernel.py: choose the operator, or name the file <namespace>__<op>.py (e.g. "
                "aten__cos.py) so it names its operator"
            ],
        ),
        ("aten__nope.py", COS, {}, ["aten__nope.py: unknown operator 'aten::nope'"]),
        (
            "aten__cos.py",
            "def cos(self):\n    return self\n",
            {},
            ["aten__cos.py: missing entry point(s) cos_out required by aten::cos"],
        ),
        ("aten__cos.py", COS, {"chips": ["no-such-chip"]}, None),
    ],
)
def test_a_refused_single_upload_changes_nothing(world, client, user, name, content, fields, problems):
    client.force_login(user)
    before = counts()
    response = post_single(client, name, content, scaffold="Never Saved Agent", **fields)
    assert response.status_code == 200
    if problems is not None:
        assert response.context["form"].non_field_errors() == problems
    assert counts() == before
    assert not Method.objects.filter(scaffold="Never Saved Agent").exists()


def test_a_refused_api_upload_creates_no_method(world, client, user):
    client.force_login(user)
    before = counts()
    response = client.post(
        "/api/submissions/",
        {"scaffold": "Never Saved Agent", "kernels": [{"operator_id": "aten::nope", "code": COS}]},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {"problems": ["aten::nope: unknown operator 'aten::nope'"]}
    assert counts() == before


def test_upload_forms_default_to_chips_with_a_live_worker_and_say_which(world, client, user):
    client.force_login(user)
    Worker.objects.create(hostname="celery@a", chip=world.chips["platform-a"])
    for url in ("/submit/", "/submit/batch/"):
        response = client.get(url)
        assert response.context["form"].fields["chips"].initial == ["platform-a"]
        html = response.content.decode()
        assert "Platform A: worker online" in html and "NVIDIA H200: no worker (runs wait in the queue)" in html
        assert "never ranked" in html


def test_a_single_upload_without_chips_goes_to_the_live_ones(world, client, user):
    client.force_login(user)
    Worker.objects.create(hostname="celery@a", chip=world.chips["platform-a"])
    response = client.post(
        "/api/submissions/",
        {"scaffold": "API Agent", "kernels": [{"operator_id": "aten::cos", "code": COS}]},
        content_type="application/json",
    )
    assert response.status_code == 201
    assert [run.chip.slug for run in Run.objects.filter(kernel__submission_id=response.json()["id"])] == ["platform-a"]


# --- The run page -----------------------------------------------------------------------------------------


def test_run_page_labels_the_fault_and_counts_cases_that_ran(world, client):
    run = world.runs["fast_rms"]
    run.cases_total, run.cases_passed = 18, 0
    run.case_results = [{"case_id": "c0", "tier": "public", "passed": False, "message": "mismatch at [0]"}]
    run.failed_case = {"case_id": "c0", "tier": "public", "message": "mismatch at [0]"}
    run.save()
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert '<span class="fault fault-kernel" id="fault">kernel</span>' in html
    assert '<dd id="cases-line">1 of 18 ran, 0 passed (17 never ran: judging stops at the first failure)</dd>' in html
    assert '<span class="fault-label">kernel:</span> mismatch at [0]' in html


def test_a_compile_error_links_its_line_into_the_code(world, client):
    run = world.runs["slow_add"]
    run.reason = (
        "the kernel file raised on import: NameError: name 'tl' is not defined\nTraceback:\n  File "
        '"/tmp/x/candidate_kernel.py", line 2, in <module>'
    )
    run.save(update_fields=["reason"])
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert '<a href="#L-2" class="kernel-line">candidate_kernel.py&quot;, line 2</a>' in html
    assert 'id="L-2"' in html


def test_an_infrastructure_error_is_not_the_kernels_fault(world, client):
    run = world.runs["slow_add"]
    run.status, run.reason = RunStatus.ERROR, "the sandbox did not start within the budget"
    run.save(update_fields=["status", "reason"])
    assert "judge (infrastructure: not the kernel's fault)" in client.get(f"/runs/{run.pk}/").content.decode()


def test_with_no_live_worker_the_forms_tick_no_chip(world, client, user):
    client.force_login(user)
    assert client.get("/submit/").context["form"].fields["chips"].initial == []
