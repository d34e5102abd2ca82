from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    """Everything that judges a kernel: chips, workers, runs, the judge and the operator catalog."""

    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from kgbweb.celery import app
        from evaluation.worker import HeartbeatStep

        if HeartbeatStep not in app.steps["worker"]:
            app.steps["worker"].add(HeartbeatStep)
