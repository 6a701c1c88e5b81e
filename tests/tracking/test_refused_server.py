"""A tracking server that refuses this client stops a tracked command at once, in one line.

`mlflow server --allowed-hosts` answers 403 to a Host header it does not list, and a server
behind authentication 401; MLflow's client would only warn and the run would go untracked.
A real HTTP server on 127.0.0.1 plays the refusing server (the end-to-end check against a
real `mlflow server --allowed-hosts` is in tests/tracking/test_team_block.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from llm_eval.tracking.preflight import store_problem
from tests.tracking.test_tracking import llm_eval, make_suite

TOKEN = "team-token-123"


class Refusing(BaseHTTPRequestHandler):
    """403 to any Host but `mlflow.example.org`; 401 without the bearer token on /auth."""

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if self.headers.get("Host") != "mlflow.example.org" and not self.path.startswith("/auth"):
            self._answer(403, b"Invalid Host header - possible DNS rebinding attack detected")
        elif self.path.startswith("/auth") and (
            self.headers.get("Authorization") != f"Bearer {TOKEN}"
        ):
            self._answer(401, b"You are not authenticated.")
        else:
            self._answer(200, b'{"experiments": []}')

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_host_the_server_does_not_list_is_a_problem(server: str) -> None:
    problem = store_problem(server)
    assert problem is not None
    assert problem.startswith(f"HTTP 403 for Host {server.removeprefix('http://')}:")
    assert "--allowed-hosts" in problem


def test_missing_credentials_are_a_problem_and_the_right_ones_are_not(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_TOKEN", raising=False)
    problem = store_problem(f"{server}/auth")
    assert problem is not None and "HTTP 401" in problem and "MLFLOW_TRACKING_TOKEN" in problem
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", TOKEN)
    assert store_problem(f"{server}/auth") is None


def test_a_refused_client_stops_run_before_any_work_in_one_line(
    server: str, tmp_path: Path
) -> None:
    root = make_suite(tmp_path / "suite")
    done = llm_eval(root, "run", "--model", "mock-varied", "--benchmark", "sample_logic",
                    "--output", "t.jsonl", MLFLOW_TRACKING_URI=server)  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: MLflow tracking store {server} is unusable: HTTP 403")
    assert not (root / "t.jsonl").exists()
