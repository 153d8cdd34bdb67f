"""Creating the official Elasticsearch client (an optional extra, imported lazily)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tipqa.core.errors import ConfigError, MissingExtraError
from tipqa.core.settings import Settings, knob, setting

URL_ENV = "TIPQA_ES_URL"
CA_CERTS_ENV = "TIPQA_ES_CA_CERTS"


@dataclass(frozen=True)
class EsConnection(Settings):
    """[elasticsearch]: the cluster that both Elasticsearch indexes live in.

    The API key is read from the environment variable named by `api_key_env` only; `url` may
    carry a user and password, which `identity()` (and so every stats file) leaves out.
    """

    url: str = setting("", doc="the cluster (empty: TIPQA_ES_URL); may hold user:password@")
    api_key_env: str = knob("ES_API_KEY", doc="environment variable holding the API key")
    ca_certs: str = knob("", doc="CA file of a self-signed cluster (or TIPQA_ES_CA_CERTS)")
    request_timeout: float = knob(120.0, doc="seconds per request")
    max_retries: int = knob(3, doc="retries of a request that timed out or got 429/5xx")

    def identity(self) -> dict[str, Any]:
        """The cluster, by its URL without credentials (the URL of TIPQA_ES_URL when unset)."""
        return {"cluster": public_url(resolve_url(self.url or None))}


def public_url(url: str) -> str:
    """`url` without a user name or password."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


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


def make_client(connection: EsConnection | None = None, *, connections: int = 10) -> Any:
    """An `Elasticsearch` client for the connection's `url` (or TIPQA_ES_URL).

    The API key is read from the environment variable named by `api_key_env` only (it is never
    a parameter, never stored on our objects and never logged); user and password may be part
    of the URL. `ca_certs` (or TIPQA_ES_CA_CERTS) is the CA file of a cluster with a
    self-signed certificate, such as the `http_ca.crt` of the official container image.
    Requests that time out or answer 429/502/503/504 are retried `max_retries` times.
    """
    connection = connection or EsConnection()
    elasticsearch = import_elasticsearch()
    from elasticsearch.serializer import OrjsonSerializer

    options: dict[str, Any] = {
        "request_timeout": connection.request_timeout,
        "max_retries": connection.max_retries,
        "retry_on_timeout": True,
        "connections_per_node": max(connections, 1),
        "serializer": OrjsonSerializer(),
    }
    api_key = os.environ.get(connection.api_key_env, "").strip()
    if api_key:
        options["api_key"] = api_key
    certs = connection.ca_certs or os.environ.get(CA_CERTS_ENV, "").strip()
    if certs:
        options["ca_certs"] = certs
    return elasticsearch.Elasticsearch(resolve_url(connection.url or None), **options)


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
