from django.urls import path

from leaderboard import staff_views, upload_views, views

app_name = "leaderboard"

urlpatterns = [
    path("", views.leaderboard_index, name="index"),
    path("about/", views.about, name="about"),
    path("boards/multi-chip/", views.multi_chip_board, name="multi_chip"),
    path("boards/cost/", views.cost_board, name="cost"),
    path("boards/matched/", views.matched_board, name="matched"),
    path("boards/portability/", views.portability_board, name="portability"),
    path("sets/<slug:set_slug>/", views.leaderboard_index, name="set_board"),
    path("plots/", views.plots_page, name="plots"),
    path("operators/", views.operator_list, name="operators"),
    path("operators/<str:operator_id>/", views.operator_detail, name="operator"),
    path("prompts/pack.jsonl", views.prompt_pack, name="prompt_pack"),
    path("methods/<int:pk>/", views.method_detail, name="method"),
    path("submit/", upload_views.submit_kernel, name="submit"),
    path("submit/batch/", upload_views.submit_batch, name="submit_batch"),
    path("me/submissions/", upload_views.my_submissions, name="my_submissions"),
    path("submissions/<int:pk>/", views.submission_detail, name="submission"),
    path("submissions/<int:pk>/status.json", views.submission_status, name="submission_status"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("runs/<int:pk>/cases.csv", views.run_cases, {"file_format": "csv"}, name="run_cases_csv"),
    path("runs/<int:pk>/cases.json", views.run_cases, {"file_format": "json"}, name="run_cases_json"),
    path("staff/rejudges/", staff_views.rejudge_list, name="rejudges"),
    path("staff/rejudges/<int:pk>/", staff_views.rejudge_detail, name="rejudge"),
    path("accounts/signup/", upload_views.signup, name="signup"),
]
