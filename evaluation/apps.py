from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    """Everything that judges a kernel: chips, workers, runs, the judge and the operator catalog."""

    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from evaluation.worker import HeartbeatStep
        from kgbweb.celery import app

        if HeartbeatStep not in app.steps["worker"]:
            app.steps["worker"].add(HeartbeatStep)
        # A Celery hook, not a Django signal: each worker pool child warms the judge as it starts.
        from celery.signals import worker_process_init

        from evaluation.worker import warm_judge_in_background

        worker_process_init.connect(lambda **_: warm_judge_in_background(), weak=False, dispatch_uid="kgb-warm-judge")
