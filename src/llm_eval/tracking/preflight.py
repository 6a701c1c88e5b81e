"""Check the tracking store before a stage starts: an unusable one fails in seconds, in one line.

MLflow retries a store it cannot open for minutes, and a stage would only find out after its
work was done. These checks need no MLflow import: a SQLite store must be a file (or a file
that can be created) in a writable directory; a server (`http(s)://`, `postgresql://`,
`mysql://`, ...) must accept a connection within `CONNECT_TIMEOUT_S`, and an MLflow server
must also accept this client: one small REST read, with the credentials MLflow's client would
send, must not be refused (403 from `mlflow server --allowed-hosts` when the Host header is not
listed, 401 without the right credentials). A refused client would otherwise log nothing and
only warn, leaving the run untracked.
"""

from __future__ import annotations

import base64
import os
import socket
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from llm_eval.errors import UsageError
from llm_eval.redaction import mask_uri, redact

CONNECT_TIMEOUT_S = 5.0

DEFAULT_PORTS = {
    "http": 80,
    "https": 443,
    "postgresql": 5432,
    "postgres": 5432,
    "mysql": 3306,
    "mssql": 1433,
}


def check_store(uri: str) -> None:
    """Raise `UsageError` naming the store when it cannot be used; return quickly otherwise."""
    problem = store_problem(uri)
    if problem is not None:
        raise UsageError(
            f"MLflow tracking store {mask_uri(uri)} is unusable: {redact(problem)} "
            "(fix MLFLOW_TRACKING_URI, or turn tracking off with LLM_EVAL_TRACKING=0)"
        )


def store_problem(uri: str) -> str | None:
    """What is wrong with the store at `uri`, or None if it looks usable."""
    if uri.startswith("sqlite:"):
        return _sqlite_problem(uri)
    scheme = urlsplit(uri).scheme.split("+", 1)[0]
    if scheme in ("", "file"):
        return None
    if scheme in DEFAULT_PORTS:
        problem = _connect_problem(uri, DEFAULT_PORTS[scheme])
        if problem is None and scheme in ("http", "https"):
            problem = _refusal_problem(uri)
        return problem
    return None  # a store plugin: MLflow knows best


def _sqlite_problem(uri: str) -> str | None:
    if not uri.startswith("sqlite:///"):
        return "a SQLite URI is sqlite:///<path to a file>"
    raw = uri.removeprefix("sqlite:///").split("?", 1)[0]
    if raw in ("", ":memory:"):
        return "an in-memory database keeps nothing"
    path = Path(raw)
    if path.is_dir():
        return f"{path} is a directory, not a database file"
    if path.exists():
        return None if os.access(path, os.R_OK | os.W_OK) else f"{path} is not writable"
    parent = _existing_ancestor(path.parent)
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot create {path}: {parent} is not writable"
    return None


def _existing_ancestor(path: Path) -> Path:
    """The nearest ancestor of `path` (itself included) that exists."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _connect_problem(uri: str, default_port: int) -> str | None:
    parts = urlsplit(uri)
    host = parts.hostname
    if not host:
        return "no host in the URI"
    try:
        port = parts.port or default_port
    except ValueError:
        return "its port is not a number"
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return f"no connection to {host}:{port} ({reason})"


REFUSED = {
    401: "the server wants credentials (set MLFLOW_TRACKING_USERNAME and "
    "MLFLOW_TRACKING_PASSWORD, or MLFLOW_TRACKING_TOKEN)",
    403: "the server refused this client; an `mlflow server --allowed-hosts` list must name "
    "the host and port as this client writes them",
}


def _refusal_problem(uri: str) -> str | None:
    """Why an MLflow server refuses this client (HTTP 401/403 to a REST read), or None."""
    base = uri.rstrip("/")
    request = urllib.request.Request(
        f"{base}/api/2.0/mlflow/experiments/search?max_results=1", headers=_auth_headers()
    )
    context = None
    if uri.startswith("https:") and os.environ.get("MLFLOW_TRACKING_INSECURE_TLS") == "true":
        context = ssl._create_unverified_context()
    try:
        with urllib.request.urlopen(request, timeout=CONNECT_TIMEOUT_S, context=context):
            return None
    except urllib.error.HTTPError as exc:
        if exc.code not in REFUSED:
            return None  # not a refusal of this client: MLflow reports anything else itself
        host = urlsplit(uri).netloc.rsplit("@", 1)[-1]
        return f"HTTP {exc.code} for Host {host}: {REFUSED[exc.code]}"
    except (OSError, ValueError):
        return None  # the connection check passed; MLflow reports what else goes wrong


def _auth_headers() -> dict[str, str]:
    """The authorization MLflow's REST client sends, from its environment variables."""
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}
    user = os.environ.get("MLFLOW_TRACKING_USERNAME")
    password = os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password:
        pair = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {pair}"}
    return {}
