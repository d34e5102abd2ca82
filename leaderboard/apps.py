from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    """The benchmark's data and what people see: operators, sets, methods, submissions, leaderboards."""

    name = "leaderboard"
    verbose_name = "Leaderboard"
