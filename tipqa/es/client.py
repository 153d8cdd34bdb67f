"""Creating the official Elasticsearch client (an optional extra, imported lazily)."""

from __future__ import annotations

import os
from typing import Any

from tipqa.errors import ConfigError, MissingExtraError

URL_ENV = "TIPQA_ES_URL"
CA_CERTS_ENV = "TIPQA_ES_CA_CERTS"


def import_elasticsearch() -> Any:
    """The `elasticsearch` package, or MissingExtraError naming the extra to install."""
    try:
        import elasticsearch
    except ImportError as exc:
        raise MissingExtraError("elasticsearch", "elasticsearch") from exc
    return elasticsearch


def resolve_url(url: str | None) -> str:
    """The cluster URL: the argument, else the TIPQA_ES_URL environment variable."""
    resolved = url or os.environ.get(URL_ENV, "").strip()
    if not resolved:
        raise ConfigError(f"no Elasticsearch URL: pass url= or set {URL_ENV}")
    return resolved


def make_client(
    url: str | None = None,
    *,
    api_key_env: str = "ES_API_KEY",
    ca_certs: str | None = None,
    request_timeout: float = 120,
    max_retries: int = 3,
    connections: int = 10,
) -> Any:
    """An `Elasticsearch` client for `url` (or TIPQA_ES_URL).

    The API key is read from the environment variable named by `api_key_env` only (it is never
    a parameter, never stored on our objects and never logged); user and password may be part
    of the URL. `ca_certs` (or TIPQA_ES_CA_CERTS) is the CA file of a cluster with a
    self-signed certificate, such as the `http_ca.crt` of the official container image.
    Requests that time out or answer 429/502/503/504 are retried `max_retries` times.
    """
    elasticsearch = import_elasticsearch()
    from elasticsearch.serializer import OrjsonSerializer

    options: dict[str, Any] = {
        "request_timeout": request_timeout,
        "max_retries": max_retries,
        "retry_on_timeout": True,
        "connections_per_node": max(connections, 1),
        "serializer": OrjsonSerializer(),
    }
    api_key = os.environ.get(api_key_env, "").strip()
    if api_key:
        options["api_key"] = api_key
    certs = ca_certs or os.environ.get(CA_CERTS_ENV, "").strip()
    if certs:
        options["ca_certs"] = certs
    return elasticsearch.Elasticsearch(resolve_url(url), **options)


def error_type(exc: BaseException) -> str:
    """The Elasticsearch error type of an API error (e.g. "resource_already_exists_exception")."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            return str(error.get("type", ""))
    return str(getattr(exc, "error", "") or "")


def body(response: Any) -> Any:
    """The decoded JSON of a client response (plain data passes through)."""
    return getattr(response, "body", response)
