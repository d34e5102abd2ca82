"""Settings, all from the environment, with defaults that run a fresh clone on SQLite and an on-disk broker.

Production: set DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis or RabbitMQ), SECRET_KEY, ALLOWED_HOSTS
and DEBUG=0. Nothing else differs between the two: the same code path runs in both.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
# Git-ignored folder for everything the embedded default writes: SQLite file, broker messages, logs.
DATA_DIR = Path(os.environ.get("KGB_DATA_DIR", BASE_DIR / "var"))
DATA_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
# The development key only ever exists with DEBUG on; production must provide one.
SECRET_KEY = os.environ.get("SECRET_KEY") or ("dev-insecure-key-change-me" if DEBUG else "")
if not SECRET_KEY:
    raise RuntimeError("SECRET_KEY must be set when DEBUG is off")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "leaderboard",
    "evaluation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "kgbweb.urls"
WSGI_APPLICATION = "kgbweb.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The web server, the worker and its heartbeat write at once: writers wait up to 60 s for the lock, and
    # IMMEDIATE transactions take the write lock up front, so two transactions never deadlock on upgrading
    # a read lock (which SQLite reports at once as "database is locked", ignoring the timeout). The rollback
    # journal, not WAL: WAL's shared-memory index is not safe across the forks a Celery prefork worker
    # makes, and a verdict written after a fork was seen lost under WAL (NOTES.md).
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": 60,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=DELETE;",
    })
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "leaderboard:index"
LOGOUT_REDIRECT_URL = "leaderboard:index"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns at every start when it is missing
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Uploads: one kernel file is small; archives of a few hundred files stay well under this.
DATA_UPLOAD_MAX_MEMORY_SIZE = 20 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 20 * 1024 * 1024
KGB_MAX_KERNEL_BYTES = int(os.environ.get("KGB_MAX_KERNEL_BYTES", 256 * 1024))
KGB_DAILY_UPLOAD_QUOTA = int(os.environ.get("KGB_DAILY_UPLOAD_QUOTA", 2000))  # kernels per user per day

# --- Celery -------------------------------------------------------------------------------------------
BROKER_DIR = DATA_DIR / "broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    (BROKER_DIR / "queue").mkdir(parents=True, exist_ok=True)
    (BROKER_DIR / "control").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    # Redis: a message unacknowledged this long is redelivered; above the longest judgement.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * 3600}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True  # results go to the database through services, never a result backend
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Tests only: run tasks in-process (never used by `make run` or the end-to-end tests).
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)

# --- Judging ------------------------------------------------------------------------------------------
KGB_JUDGE_BUDGET_S = float(os.environ.get("KGB_JUDGE_BUDGET_S", 300))  # per run, sandbox included
# Most a run waits for its GPU while other judgements on the host hold it (a worker with --concurrency > 1).
KGB_DEVICE_WAIT_LIMIT_S = float(os.environ.get("KGB_DEVICE_WAIT_LIMIT_S", 300))
KGB_HEARTBEAT_INTERVAL_S = float(os.environ.get("KGB_HEARTBEAT_INTERVAL_S", 10))
KGB_WORKER_STALE_AFTER_S = float(os.environ.get("KGB_WORKER_STALE_AFTER_S", 60))
KGB_MAX_RUN_ATTEMPTS = int(os.environ.get("KGB_MAX_RUN_ATTEMPTS", 3))
# The benchmark's published data (operators.csv, paper_results.csv, paper_cost.csv), copied from the
# KernelGenBench release into the repository so a clone anywhere has it.
KGB_DATA_FILES_DIR = Path(os.environ.get("KGB_DATA_FILES_DIR", BASE_DIR / "leaderboard" / "data"))

# --- REST API (leaderboard.api): token + session auth, role permissions, pagination, filters, throttling ---
INSTALLED_APPS += [
    "rest_framework.authtoken",  # one token per user, managed on /api/token/ (DRF's model, no model of ours)
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / ReDoc assets served from our own static files
]
REST_FRAMEWORK = {
    # Token first: an anonymous write is then a 401 with "WWW-Authenticate: Token", not a bare 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "leaderboard.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("KGB_API_ANON_RATE", "120/min"),
        "user": os.environ.get("KGB_API_USER_RATE", "600/min"),
    },
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "KernelGenBench Web API",
    "DESCRIPTION": "Operators, chips, methods, submissions, kernels, runs and leaderboards; uploads by script.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}
# How long runs exported in an offline job bundle stay claimed before they may be handed out again.
KGB_BUNDLE_LEASE_S = float(os.environ.get("KGB_BUNDLE_LEASE_S", 7 * 24 * 3600))
# --- end REST API

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
