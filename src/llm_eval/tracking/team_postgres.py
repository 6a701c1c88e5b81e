"""A PostgreSQL for a team's `mlflow server`, started from a Python package: no root tools.

`python -m llm_eval.tracking.team_postgres start --data DIR --port N` initialises DIR on first
use (`initdb`, trust authentication, UTF-8), starts the server on 127.0.0.1:N (`pg_ctl`,
logging to DIR/log), creates the `mlflow` database when missing and prints the URI to give
`mlflow server --backend-store-uri`. `stop --data DIR` stops it. The binaries come from the
`pgserver` wheel (the `server` extra: `uv sync --extra dev --extra server`), so no system
package, `sudo` or `postgres` account is needed. PostgreSQL refuses to run as root; run as
root (as on CI), the data folder is handed to the unprivileged `nobody` account and the
server runs as it.

Trust authentication on 127.0.0.1 suits a tracking server on the same machine; a server
other machines reach needs passwords (`pg_hba.conf`), which this helper does not set up.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pwd
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

DATABASE = "mlflow"
UNPRIVILEGED = "nobody"


class PostgresError(RuntimeError):
    """PostgreSQL could not be set up; the message says why."""


def bin_dir() -> Path:
    """The folder of `initdb`, `pg_ctl` and `postgres` shipped by the `pgserver` wheel."""
    # Found, not imported: importing pgserver starts its own server machinery.
    spec = importlib.util.find_spec("pgserver")
    found = Path(spec.origin).parent / "pginstall" / "bin" if spec and spec.origin else None
    if found is None or not (found / "pg_ctl").is_file():
        raise PostgresError(
            "PostgreSQL's binaries are missing: install the server extra "
            "(uv sync --extra dev --extra server)"
        )
    return found


def uri(port: int) -> str:
    """The SQLAlchemy URI of the `mlflow` database on 127.0.0.1:`port`."""
    return f"postgresql+psycopg://postgres@127.0.0.1:{port}/{DATABASE}"


def start(data: Path, port: int) -> str:
    """Initialise `data` if new, start PostgreSQL on 127.0.0.1:`port`, ensure the database."""
    data = data.resolve()
    data.mkdir(parents=True, exist_ok=True)
    as_user = _drop_root(data)
    tools = bin_dir()
    if not (data / "PG_VERSION").exists():
        _run([tools / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"],
             as_user)  # fmt: skip
    if not _running(data, as_user):
        options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1"
        _run([tools / "pg_ctl", "-D", data, "-o", options, "-l", data / "log", "-w", "start"],
             as_user)  # fmt: skip
    _ensure_database(port)
    return uri(port)


def stop(data: Path) -> None:
    """Stop the PostgreSQL of `data` if it runs (fast shutdown: sessions end, data stays)."""
    data = data.resolve()
    as_user = _drop_root(data)
    if _running(data, as_user):
        _run([bin_dir() / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop"], as_user)


def _running(data: Path, as_user: Callable[[], None] | None) -> bool:
    done = subprocess.run([str(bin_dir() / "pg_ctl"), "-D", str(data), "status"],
                          capture_output=True, text=True, preexec_fn=as_user)  # fmt: skip
    return done.returncode == 0


def _drop_root(data: Path) -> Callable[[], None] | None:
    """When running as root: give `data` to `nobody` and return a switch to that account."""
    if os.geteuid() != 0:
        return None
    account = pwd.getpwnam(UNPRIVILEGED)
    for path in [data, *data.rglob("*")]:
        os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
    # `nobody` must reach the data folder; its parents stay as they are, but traversable.
    for parent in data.parents:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)

    def switch() -> None:
        os.setgroups([])
        os.setgid(account.pw_gid)
        os.setuid(account.pw_uid)

    return switch


def _run(command: Sequence[object], as_user: Callable[[], None] | None) -> None:
    args = [str(part) for part in command]
    done = subprocess.run(args, capture_output=True, text=True, preexec_fn=as_user, timeout=300)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        # initdb ends with its clean-up; the first error line says what went wrong.
        errors = [line for line in lines if "error" in line.lower()] or lines or ["?"]
        raise PostgresError(f"{Path(args[0]).name} failed: {errors[0].strip()}")


def _ensure_database(port: int) -> None:
    import psycopg

    for attempt in range(20):  # `pg_ctl -w` returns once it accepts; a busy machine lags
        try:
            with psycopg.connect(
                f"host=127.0.0.1 port={port} user=postgres dbname=postgres", autocommit=True
            ) as db:
                found = db.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
                if found.fetchone() is None:
                    db.execute(f"CREATE DATABASE {DATABASE}")
                return
        except psycopg.OperationalError:
            if attempt == 19:
                raise
            time.sleep(0.5)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m llm_eval.tracking.team_postgres")
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--data", type=Path, required=True, help="PostgreSQL's data folder")
    parser.add_argument("--port", type=int, default=5432, help="port on 127.0.0.1 (start)")
    args = parser.parse_args(argv)
    try:
        if args.action == "start":
            print(start(args.data, args.port))
        else:
            stop(args.data)
    except (PostgresError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
