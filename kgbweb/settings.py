"""Settings, all from the environment, with defaults that run a fresh clone on SQLite and an on-disk broker.

Production: set DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis or RabbitMQ), SECRET_KEY, ALLOWED_HOSTS,
an email server (EMAIL_HOST ...) and REDIS_CACHE_URL if you like. DEBUG is off unless DEBUG=1 asks for it.
Nothing else differs between the two: the same code path runs in both.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from whitenoise.compress import Compressor

from kgbweb.data_dir import create_private_file, private_dir, read_or_create_secret_key, secure_data_dir

BASE_DIR = Path(__file__).resolve().parent.parent
# Git-ignored folder for everything the embedded default writes: SQLite file, broker messages, logs, the
# generated SECRET_KEY. Closed to other users (0700, files 0600): the sandbox's user must not read it.
DATA_DIR = Path(os.environ.get("KGB_DATA_DIR", BASE_DIR / "var"))
secure_data_dir(DATA_DIR)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# Off unless asked for: a debug page shows settings and code to whoever makes a request fail.
DEBUG = env_bool("DEBUG", False)
# The best-verdict summary's covering index includes the speedup for PostgreSQL's index-only scans; SQLite
# builds it as a plain partial index, which is all it needs at its size, so its warning is noise on every command.
SILENCED_SYSTEM_CHECKS = ["models.W040"]
# A key of this installation's own, kept in the data dir (0600), where none is given.
SECRET_KEY = os.environ.get("SECRET_KEY") or read_or_create_secret_key(DATA_DIR / "secret_key")
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1", "testserver"}
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
# Served to this machine only (`make run`): plain http, so cookies may not insist on https.
SERVED_LOCALLY = set(ALLOWED_HOSTS) <= LOCAL_HOSTS

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "axes",  # lockout after repeated wrong passwords, on every login path (site, admin, API token)
    "csp",
    "kgbweb.accounts.apps.AccountsConfig",
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
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: it turns a lockout into its response
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

if "DATABASE_URL" not in os.environ:
    # Created 0600 before SQLite opens it (its journal then gets the same mode), whatever the umask.
    create_private_file(DATA_DIR / "db.sqlite3")
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        # A kept connection is checked before a request reuses it: one the database dropped (a restart, a
        # failover, pg_terminate_backend) is replaced instead of failing that request with a 500.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The web server, the worker and its heartbeat write at once: writers wait up to 60 s for the lock, and
    # IMMEDIATE transactions take the write lock up front, so two transactions never deadlock on upgrading
    # a read lock (which SQLite reports at once as "database is locked", ignoring the timeout). The rollback
    # journal, not WAL: WAL's shared-memory index is not safe across the forks a Celery prefork worker
    # makes, and a verdict written after a fork was seen lost under WAL (NOTES.md).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 60,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=DELETE;",
        }
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's validators: sign-up (UserCreationForm), password change and reset all run them.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first: it refuses a locked-out username + address before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("KGB_LOGIN_FAILURE_LIMIT", 5))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("KGB_LOGIN_COOLOFF_MINUTES", 15)))
# Per username and address: a stranger cannot lock a user out from elsewhere, and one address trying many
# passwords for one account is stopped. Address-wide floods are the throttles' job (REST_FRAMEWORK below).
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "kgbweb.accounts.lockout.lockout_response"  # JSON for the API, a page otherwise
# The address as the API throttles see it (NUM_PROXIES below): reverse proxies in front of gunicorn.
AXES_CLIENT_IP_CALLABLE = "kgbweb.accounts.lockout.client_address"
AXES_VERBOSE = False
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "leaderboard:index"
LOGOUT_REDIRECT_URL = "leaderboard:index"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("KGB_STATIC_ROOT", BASE_DIR / "staticfiles"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns at every start when it is missing
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_ROOT = BASE_DIR / "static" / "root"  # served at the site's root: /favicon.ico
# Collected files get a content hash in their names and gzip + brotli siblings; WhiteNoise then serves them
# compressed and cacheable for ten years. Tests and DEBUG serve the plain files (no collectstatic needed).
STATIC_MANIFEST = env_bool("KGB_STATIC_MANIFEST", not DEBUG)
# Without collected files (DEBUG, KGB_STATIC_MANIFEST=0) WhiteNoise serves the source folders themselves.
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST
# Only the hashed copies are kept and compressed, and source maps (megabytes, fetched by developer tools
# only) are not compressed: collectstatic then takes seconds, not minutes.
WHITENOISE_KEEP_ONLY_HASHED_FILES = True
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = (*Compressor.SKIP_COMPRESS_EXTENSIONS, "map")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
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
    private_dir(BROKER_DIR / "queue")
    private_dir(BROKER_DIR / "control")
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
# How long `manage.py worker --gpus` waits for its workers' warm shutdown before it kills them.
KGB_WORKER_STOP_GRACE_S = max(0.0, float(os.environ.get("KGB_WORKER_STOP_GRACE_S", 300)))
KGB_MAX_RUN_ATTEMPTS = int(os.environ.get("KGB_MAX_RUN_ATTEMPTS", 3))
# A worker stops taking runs after this many judge errors in a row (evaluation.models.Worker).
KGB_WORKER_ERROR_STREAK = int(os.environ.get("KGB_WORKER_ERROR_STREAK", 3))
# The benchmark's published data (operators.csv, paper_results.csv, paper_cost.csv), copied from the
# KernelGenBench release into the repository so a clone anywhere has it.
KGB_DATA_FILES_DIR = Path(os.environ.get("KGB_DATA_FILES_DIR", BASE_DIR / "leaderboard" / "data"))

# --- REST API (leaderboard.api): token + session auth, role permissions, pagination, filters, throttling ---
INSTALLED_APPS += [
    "knox",  # API tokens, stored as SHA-512 digests (the key is shown once, on /api/token/)
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / ReDoc assets served from our own static files
]
REST_FRAMEWORK = {
    # Token first: an anonymous write is then a 401 with "WWW-Authenticate: Token", not a bare 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "knox.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "leaderboard.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Reverse proxies in front of gunicorn: the client is the N-th address from the right of X-Forwarded-For.
    "NUM_PROXIES": int(os.environ.get("KGB_PROXY_COUNT", 0)),
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("KGB_API_ANON_RATE", "120/min"),
        "user": os.environ.get("KGB_API_USER_RATE", "600/min"),
        # Password guesses at /api/token/obtain/ per address, on top of django-axes' per-account lockout.
        "token_obtain": os.environ.get("KGB_TOKEN_OBTAIN_RATE", "10/min"),
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
# `Authorization: Token <key>` as with DRF's tokens, so `kgb` and scripts did not change; keys expire.
REST_KNOX = {
    "AUTH_HEADER_PREFIX": "Token",
    "TOKEN_TTL": timedelta(days=float(os.environ.get("KGB_TOKEN_TTL_DAYS", 365))),
    "TOKEN_LIMIT_PER_USER": int(os.environ.get("KGB_TOKENS_PER_USER", 20)),
    "AUTO_REFRESH": False,
}
# How long runs exported in an offline job bundle stay claimed before they may be handed out again.
KGB_BUNDLE_LEASE_S = float(os.environ.get("KGB_BUNDLE_LEASE_S", 7 * 24 * 3600))
# --- end REST API

# --- Cache: throttle counts and lockouts must be shared by every gunicorn worker and host ---------------
# The database's own table by default (created by `migrate`), so the embedded default needs nothing more;
# Redis when REDIS_CACHE_URL names one (its own database: Django's cache.clear() empties the whole one).
REDIS_CACHE_URL = os.environ.get("REDIS_CACHE_URL", "")
if REDIS_CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_CACHE_URL,
            "KEY_PREFIX": "kgb",
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "kgb_cache"}}

# --- Email: printed to the console by default (password reset mails show in the log); a server when set ---
if os.environ.get("EMAIL_HOST"):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = os.environ["EMAIL_HOST"]
    EMAIL_PORT = int(os.environ.get("EMAIL_PORT", 587))
    EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", EMAIL_PORT == 587)
    EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", EMAIL_PORT == 465)
    EMAIL_TIMEOUT = 30
else:
    EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "KernelGenBench Web <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
PASSWORD_RESET_TIMEOUT = 3 * 3600

# --- Content-Security-Policy (django-csp): everything from this origin, no inline script (docs/csp.md) ----
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        # Inline styles, not scripts: Plotly (its stylesheet, modebar rules, heatmap pixels) and ReDoc
        # (styled-components) inject styles as they draw. Our own templates use none (tests/kgbweb).
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],  # Plotly's and Swagger UI's own icons are data: URLs
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'", "blob:"],  # Redoc parses the schema in a worker it builds from a blob
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

# Secure cookies wherever the site is served beyond this machine (behind https, as production must be).
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG and not SERVED_LOCALLY)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG and not SERVED_LOCALLY)
if env_bool("KGB_BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
