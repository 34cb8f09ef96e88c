"""A stock Django REST Framework API over the interop catalog: page-number pagination (50 a page,
404 past the last), django-filter lookups and `ordering`. Nothing here is tailored to StoreChain.
The database is the SQLite file named by INTEROP_CATALOG, or the PostgreSQL database at
INTEROP_POSTGRES_URL (postgres://user:password@host:port/name) where that is set."""
import os
from urllib.parse import urlparse

SECRET_KEY = "interop-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["rest_framework", "rest_framework_json_api", "django_filters", "interop_drf"]
ROOT_URLCONF = "interop_drf.urls"
if os.environ.get("INTEROP_POSTGRES_URL"):
    _url = urlparse(os.environ["INTEROP_POSTGRES_URL"])
    DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": _url.path.lstrip("/"),
                             "USER": _url.username, "PASSWORD": _url.password, "HOST": _url.hostname,
                             "PORT": _url.port}}
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["INTEROP_CATALOG"]}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]  # APPEND_SLASH: /albums → 301 /albums/
REST_FRAMEWORK = {
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "UNAUTHENTICATED_USER": None,
}
LOGGING = {
    "version": 1,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.server": {"handlers": ["console"], "level": "INFO"}},
}
