"""Settings for the memory service, read from the environment only.

Every variable has a safe default for the embedded mode (`make run`): SQLite and
a file-system Celery broker under `var/`, DEBUG off. Production sets
`DATABASE_URL`, `CELERY_BROKER_URL` and `SECRET_KEY` (see `.env.example`).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memory_project.environment import env_bool, env_float, env_float_map, env_int, env_list

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MEMORY_VAR_DIR", BASE_DIR / "var"))
# The var directory holds the embedded database and its write-ahead log, the
# cache (admin sessions' keys), the broker's messages and exports: owner-only
# from the first byte. The umask covers every file the service creates there
# (SQLite opens its own files, kombu and celery beat theirs), so none is ever
# readable by another local user, not even between its creation and a chmod.
os.umask(0o077)
VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
VAR_DIR.chmod(0o700)


DEBUG = env_bool("DEBUG", False)
# Production is whatever runs against an explicit database; the embedded mode may
# use a generated per-checkout secret, production must bring its own.
EMBEDDED = "DATABASE_URL" not in os.environ

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not EMBEDDED and not DEBUG and not env_bool("MEMORY_ALLOW_GENERATED_SECRET", False):
        raise ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL is set.")
    secret_file = VAR_DIR / "secret_key"
    if not secret_file.exists():
        import secrets

        try:
            descriptor = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process of this checkout wrote it first
        else:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(secrets.token_urlsafe(50))
    SECRET_KEY = secret_file.read_text().strip()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "conversations",
    "memories",
    # Above both: the server side of the framework adapters, and the agent tools.
    "framework_state",
    "agent_tools",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "memory_project.middleware.RequestGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's own, skipped by API requests (the console's session, login, messages).
    "memory_project.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "memory_project.middleware.AuthenticationMiddleware",
    "memory_project.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "memory_project.urls"
WSGI_APPLICATION = "memory_project.wsgi.application"
ASGI_APPLICATION = "memory_project.asgi.application"

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

# --- Database -----------------------------------------------------------------
# pgvector's HNSW: the candidate list per search (the longest pgvector takes),
# and the graph, read when the index is built after `migrate` (docs/operations.md).
PGVECTOR_EF_SEARCH = env_int("PGVECTOR_EF_SEARCH", 1000)
PGVECTOR_HNSW_M = env_int("PGVECTOR_HNSW_M", 16)
PGVECTOR_HNSW_EF_CONSTRUCTION = env_int("PGVECTOR_HNSW_EF_CONSTRUCTION", 64)

if EMBEDDED:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(VAR_DIR / "memory.sqlite3")),
            "OPTIONS": {
                # IMMEDIATE takes the write lock at BEGIN, so two writers queue on
                # the busy timeout instead of failing with "database is locked"
                # when a read transaction tries to upgrade.
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                # journal_size_limit: with connections kept open the WAL is
                # checkpointed by the writers as it passes wal_autocheckpoint
                # (1000 pages), never emptied by a last close; this truncates
                # the file after a checkpoint so it cannot keep a peak's size.
                # secure_delete: SQLite keeps a deleted row's bytes in free
                # pages until they are reused; erasure (redaction, lineage)
                # must leave nothing in the file, so deleted content is
                # overwritten with zeros as it is deleted.
                # cache_size: SQLite's own page cache, per connection (kept
                # open, so it stays warm), 64 MiB instead of about 2: the b-tree
                # pages of the tables' indexes and full-text indexes a write
                # walks stay in memory between statements (bench/README.md).
                # A ceiling, filled as pages are read, per connection: each
                # thread of each web and worker process keeps its own.
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=67108864; "
                    "PRAGMA secure_delete=ON; PRAGMA cache_size=-65536;"
                ),
            },
            # Opening a connection per request cost a fifth of a read, and
            # closing the last one checkpoints the WAL (a third of an append's
            # time): connections stay open across requests.
            "CONN_MAX_AGE": env_int("DB_CONN_MAX_AGE", 600),
            # Tests use a file, not the in-memory default: live-server threads and
            # worker subprocesses then get connections of their own, as in production.
            "TEST": {"NAME": str(VAR_DIR / "test_memory.sqlite3")},
        }
    }
else:
    # Persistent connections without a per-request health check (a `SELECT 1`
    # before each request's first query): a connection the server dropped
    # fails that request with a 503 and Retry-After (memory_project.api) and is
    # replaced at the request's end. DB_CONN_HEALTH_CHECKS=1 trades the
    # round trip for never failing such a request.
    DATABASES = {
        "default": dj_database_url.parse(
            os.environ["DATABASE_URL"],
            conn_max_age=env_int("DB_CONN_MAX_AGE", 600),
            conn_health_checks=env_bool("DB_CONN_HEALTH_CHECKS", False),
        )
    }
    if DATABASES["default"]["ENGINE"].endswith("postgresql"):
        # pgvector's HNSW search, set once per connection, and (pgvector 0.8+) a
        # scan that goes on until enough rows pass the workspace and scope
        # filter; an older pgvector logs that it ignores the second.
        DATABASES["default"].setdefault("OPTIONS", {})["options"] = (
            f"-c hnsw.ef_search={PGVECTOR_EF_SEARCH} -c hnsw.iterative_scan=relaxed_order")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache (API keys, rate limits) ------------------------------------------------
# Shared by every web worker: Redis when CACHE_URL is set, else a diskcache
# directory beside the database (SQLite files every process opens, with an
# atomic `incr`), never a per-process cache (each gunicorn worker would keep
# its own rate-limit window: with two workers a 5/min limit let 10 through).
CACHE_URL = os.environ.get("CACHE_URL", "")
if CACHE_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}}
else:
    CACHES = {
        "default": {
            "BACKEND": "diskcache.DjangoCache",
            "LOCATION": os.environ.get("CACHE_DIR", str(VAR_DIR / "cache")),
        }
    }
# How long a cached API key row may be served. Changes made through the ORM
# (revoke, admin edits) are seen at once; this bounds changes made behind it.
API_KEY_CACHE_SECONDS = env_int("API_KEY_CACHE_SECONDS", 300)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# The console writes every moment as 2026-11-29 10:14:16 (memory_project/formats).
FORMAT_MODULE_PATH = "memory_project.formats"

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "staticfiles"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Static files are served by WhiteNoise in every mode; in the embedded mode and in
# tests they are found straight from the apps, so no collectstatic is needed.
WHITENOISE_USE_FINDERS = env_bool("WHITENOISE_USE_FINDERS", True)
WHITENOISE_AUTOREFRESH = DEBUG

# --- Request size -------------------------------------------------------------
# A message may hold up to 50 MB of serialized content; leave room for the
# envelope. Larger bodies are refused before they are parsed.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 52 * 1024 * 1024 + 64 * 1024)

# Nesting depth a JSON body may reach (memory_project.parsers).
JSON_MAX_DEPTH = env_int("JSON_MAX_DEPTH", 64)

# --- REST framework -----------------------------------------------------------
# How many proxies in front of the service append to X-Forwarded-For. The
# client's address (throttles, admin login lockout) is the one that many hops
# from the right; 0 (the default) trusts no forwarded header and uses the
# connection's own address, so a client cannot pick its address by sending one.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.permissions.HasWorkspaceKey"],
    "DEFAULT_RENDERER_CLASSES": ["memory_project.renderers.ApiJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["memory_project.parsers.StrictJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "memory_project.negotiation.ApiContentNegotiation",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "memory_project.api.exception_handler",
    "DEFAULT_METADATA_CLASS": "memory_project.openapi.ApiMetadata",
    "UNAUTHENTICATED_USER": None,
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_THROTTLE_CLASSES": ["accounts.throttling.ApiKeyRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "api_key": os.environ.get("API_RATE_LIMIT", "6000/min"),
        # Requests with a missing or wrong key, per client address.
        "auth_failure": os.environ.get("API_AUTH_FAILURE_RATE", "120/min"),
    },
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Memory service API",
    "DESCRIPTION": "Conversations, memories and memory stores for AI agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/v1",
    # The schema and its doc pages are public; every API route still needs a key.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    # The doc pages' assets come from the installed sidecar package, served
    # like any static file: the docs work on a machine with no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two choice sets share the field name "role" (stored messages, temporary
    # context messages): name the stored one so neither gets a hash suffix.
    # Likewise "scope": every scope (jobs, scope states) and the ones a scope
    # action accepts (no store).
    "ENUM_NAME_OVERRIDES": {"MessageRoleEnum": "conversations.models.Role", "MemoryScopeEnum": "memories.models.Scope"},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "memory_project.openapi.add_error_responses",
    ],
}

# --- Celery -------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    else {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
)
if CELERY_BROKER_URL.startswith("filesystem"):
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Outside the apps' `tasks` modules: the worker heartbeat behind `/readyz`.
CELERY_IMPORTS = ("memory_project.readiness",)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# LLM work is slow and uneven: one task at a time per worker process keeps a long
# extraction from holding back prefetched short ones.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_TIMEZONE = "UTC"

# --- The memory pipeline ------------------------------------------------------
MEMORY_EXTRACT_MIN_FLOORS = env_int("MEMORY_EXTRACT_MIN_FLOORS", 6)
MEMORY_EXTRACT_MIN_TOKENS = env_int("MEMORY_EXTRACT_MIN_TOKENS", 1500)
MEMORY_EXTRACT_BATCH_FLOORS = env_int("MEMORY_EXTRACT_BATCH_FLOORS", 50)
# A network model's batch: at most this many tokens of turns (and at most
# MEMORY_EXTRACT_BATCH_FLOORS floors), one call each.
MEMORY_EXTRACT_BATCH_TOKENS = env_int("MEMORY_EXTRACT_BATCH_TOKENS", 4000)
MEMORY_COMPACT_MIN_MICROS = env_int("MEMORY_COMPACT_MIN_MICROS", 8)
MEMORY_VERSION_RETENTION_DAYS = env_int("MEMORY_VERSION_RETENTION_DAYS", 30)
MEMORY_CONVERSATION_EXPIRE_DAYS = env_int("MEMORY_CONVERSATION_EXPIRE_DAYS", 0)  # 0 = never
MEMORY_MAINTENANCE_INTERVAL_SECONDS = env_int("MEMORY_MAINTENANCE_INTERVAL_SECONDS", 600)
# A conversation quiet this long gets its last floors (below the thresholds) extracted.
MEMORY_IDLE_EXTRACT_SECONDS = env_int("MEMORY_IDLE_EXTRACT_SECONDS", 300)
# Periodic work, declared here and nowhere else.
CELERY_BEAT_SCHEDULE = {
    # Compaction of due scopes, extraction of idle dirty scopes, recovery of jobs
    # whose worker died, version retention, store-item TTLs and conversation
    # expiry. Ten minutes by default: compaction needs several micro summaries to
    # gather (minutes of chat), TTLs and retention are counted in hours or days,
    # and a dead worker's job is only declared stale after ten minutes anyway.
    "memory-maintenance": {"task": "memories.tasks.schedule_maintenance_task",
                           "schedule": float(MEMORY_MAINTENANCE_INTERVAL_SECONDS)},
    # Idle endings: a conversation that stops below the extraction thresholds is
    # extracted within a minute of going quiet for MEMORY_IDLE_EXTRACT_SECONDS.
    # One query over the branches' counters per tick (no work when nothing is idle).
    "memory-idle-extract": {"task": "memories.tasks.extract_idle_branches_task", "schedule": 60.0},
    # Readiness (`/readyz`): a worker that runs this records that it is alive
    # and consuming; half a minute keeps the heartbeat fresh at no cost.
    "worker-heartbeat": {"task": "memory_project.readiness.worker_heartbeat_task", "schedule": 30.0},
}

# Language model: "offline" (default, no network), "openai" (any OpenAI-compatible
# endpoint) or "anthropic".
LLM_PROVIDER = os.environ.get("LLM_PROVIDER", "offline")
LLM_MODEL = os.environ.get("LLM_MODEL", "")
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "")
LLM_API_KEY = os.environ.get("LLM_API_KEY", "")
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 60.0)
LLM_MAX_RETRIES = min(env_int("LLM_MAX_RETRIES", 4), 5)
# A pause per extraction batch in the offline provider: lets tests and demos
# stop a worker mid-job. 0 in normal use.
LLM_OFFLINE_DELAY_SECONDS = env_float("LLM_OFFLINE_DELAY_SECONDS", 0.0)
# Dense vectors fused with BM25 in recall: "offline" (default: multilingual-e5-small
# from an installed package, no download), "openai" (any OpenAI-compatible
# /embeddings endpoint) or "none" (BM25 alone). See memories/recall/embeddings.py.
EMBEDDING_PROVIDER = os.environ.get("EMBEDDING_PROVIDER", "offline")
# For "openai": the model, and the endpoint and key (default: the LLM_* ones).
EMBEDDING_MODEL = os.environ.get("EMBEDDING_MODEL", "")
EMBEDDING_BASE_URL = os.environ.get("EMBEDDING_BASE_URL", "")
EMBEDDING_API_KEY = os.environ.get("EMBEDDING_API_KEY", "")
# Vector length asked of the endpoint (models that accept `dimensions`); 0 = the model's own.
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 0)
EMBEDDING_TIMEOUT_SECONDS = env_float("EMBEDDING_TIMEOUT_SECONDS", 30.0)
EMBEDDING_MAX_RETRIES = min(env_int("EMBEDDING_MAX_RETRIES", 3), 5)
# Threads of the offline model per process (0 = the engine's default: all cores).
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 0)
# Where a query's nearest vectors are found, per scope: "auto" (in process
# while the scope's vectors fit RECALL_VECTOR_CACHE_MIB, in PostgreSQL with
# pgvector past that, where the database has the extension), "database"
# (always pgvector: web workers hold no vectors) or "process" (always in
# process). See memories/recall/dense.py.
RECALL_VECTOR_INDEX = os.environ.get("RECALL_VECTOR_INDEX", "auto")
if RECALL_VECTOR_INDEX not in ("auto", "database", "process"):
    raise ImproperlyConfigured("RECALL_VECTOR_INDEX must be auto, database or process.")
# Memory a process may spend on cached vectors (MiB), all scopes together:
# the least recently used scopes leave first; a scope larger than this alone
# is not cached: pgvector finds its neighbours where the database has it,
# else it ranks by BM25 alone (`recall_vector_cache_report`).
RECALL_VECTOR_CACHE_MIB = env_int("RECALL_VECTOR_CACHE_MIB", 512)
# Fusion of BM25 and dense rankings (chosen on bench/recall.py's tuning split;
# the figures are in bench/README.md): the reciprocal-rank constant, and how
# far below the best cosine a neighbour by meaning still counts (each cosine
# read on its script pair's scale, RECALL_COSINE_SCRIPT_SHIFT below).
RECALL_RRF_K = env_float("RECALL_RRF_K", 10.0)
RECALL_DENSE_MARGIN = env_float("RECALL_DENSE_MARGIN", 0.04)
# The weight of the second, expanded pass in the fusion (0 turns it off); see
# memories/recall/ranking.py and bench/README.md.
RECALL_EXPANSION_WEIGHT = env_float("RECALL_EXPANSION_WEIGHT", 0.25)
# Absolute relevance (memories/recall/ranking.py): an entry may be injected
# only at RECALL_MIN_RELEVANCE or above, on a 0..1 scale, the larger of its
# term evidence (the idf share of the query's rarest words it holds) and its
# meaning evidence (the dense cosine mapped from RECALL_COSINE_UNRELATED -> 0
# to RECALL_COSINE_SAME -> 1, levels for a Latin-script query and entry, both
# moved by RECALL_COSINE_SCRIPT_SHIFT for "query>entry" scripts latin or cjk).
# The levels are the offline model's, measured on bench/recall.py's corpus
# (bench/README.md); another embedding model needs its own.
RECALL_MIN_RELEVANCE = env_float("RECALL_MIN_RELEVANCE", 0.15)
RECALL_COSINE_UNRELATED = env_float("RECALL_COSINE_UNRELATED", 0.75)
RECALL_COSINE_SAME = env_float("RECALL_COSINE_SAME", 0.95)
if not RECALL_COSINE_UNRELATED < RECALL_COSINE_SAME:
    raise ImproperlyConfigured("RECALL_COSINE_UNRELATED must be below RECALL_COSINE_SAME.")
RECALL_COSINE_SCRIPT_SHIFT = env_float_map(
    "RECALL_COSINE_SCRIPT_SHIFT", {"cjk>cjk": 0.05, "latin>cjk": -0.02, "cjk>latin": 0.01},
    keys={"latin>latin", "latin>cjk", "cjk>latin", "cjk>cjk"})

# --- Security -----------------------------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not EMBEDDED)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not EMBEDDED)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# Load balancers probe the health check over plain HTTP on the private side.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
if env_bool("USE_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Erasure on disk (memory_project.erasure): on PostgreSQL, each erasure
# rewrites the tables it touched (VACUUM FULL) after it commits, so no dead
# tuple of the text stays in the table files. Off: run `manage.py
# erasure_rewrite` on a schedule instead (the rewrite locks each table while it runs).
MEMORY_ERASURE_REWRITE = env_bool("MEMORY_ERASURE_REWRITE", True)
# A dead row version stays in the rewritten file while a transaction that
# began before the erasure committed can still see it: the rewrite waits at
# most this long (seconds) for such transactions to end.
MEMORY_ERASURE_REWRITE_WAIT_SECONDS = env_float("MEMORY_ERASURE_REWRITE_WAIT_SECONDS", 10.0)

# The admin login: failed attempts allowed per client address and per
# username within the window before further attempts are refused.
ADMIN_LOGIN_MAX_FAILURES = env_int("ADMIN_LOGIN_MAX_FAILURES", 10)
ADMIN_LOGIN_WINDOW_SECONDS = env_int("ADMIN_LOGIN_WINDOW_SECONDS", 900)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
