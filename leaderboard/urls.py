from django.urls import path

from leaderboard import views

app_name = "leaderboard"

urlpatterns = [
    path("", views.leaderboard_index, name="index"),
    path("submit/", views.submit_kernel, name="submit"),
    path("submissions/<int:pk>/", views.submission_detail, name="submission"),
    path("submissions/<int:pk>/status.json", views.submission_status, name="submission_status"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("accounts/signup/", views.signup, name="signup"),
]
