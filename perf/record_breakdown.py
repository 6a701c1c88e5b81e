"""Where a run's MLflow record goes: reading the rows, building the store's rows, SQLite.

`perf/tracking_overhead.py` runs this in a process of its own after its rounds, on the rows
of one of its runs and a copy of its store (the rows under a new run id, so that every
trace is new to the store, as after a run). Each part is the process's CPU time for that
part alone, with the cycle collector paused as the record pauses it:

- read: the trace file read back into rows (`read_rows`);
- build: every row's trace as the rows of MLflow's tables (`row_trace`, `trace_rows`);
- SQL: inserting those rows, committing and closing the store (`sqlite_traces`), which
  is what MLflow's schema costs whatever builds the rows.

    uv run python perf/record_breakdown.py --store ROOT/mlruns --rows ROOT/run.jsonl

prints one JSON object of seconds: {"rows": N, "read_s": .., "build_s": .., "sql_s": ..}.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

EXPERIMENT = "llm-eval"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="a local store's folder")
    parser.add_argument("--rows", type=Path, required=True, help="a run's results file")
    parser.add_argument("--experiment", default=EXPERIMENT)
    args = parser.parse_args()

    from llm_eval.runner.trace_io import read_rows
    from llm_eval.tracking import sqlite_traces
    from llm_eval.tracking.bulk_traces import row_trace
    from llm_eval.tracking.mlflow_rows import trace_rows
    from llm_eval.tracking.sqlite_store import open_client

    with tempfile.TemporaryDirectory() as directory:
        store = Path(directory) / "store"
        shutil.copytree(args.store, store)
        client = open_client(f"sqlite:///{store / 'mlflow.db'}", args.experiment)
        if client is None:
            raise SystemExit(f"{args.store}: not a local store the record writes with sqlite3")
        experiment = client.get_experiment_by_name(args.experiment)
        assert experiment is not None
        gc.disable()

        started = time.process_time()
        rows = read_rows(args.rows)
        read_s = time.process_time() - started
        rows = [row.model_copy(update={"run_id": f"breakdown-{row.run_id}"}) for row in rows]

        started = time.process_time()
        built = [
            trace_rows(row_trace(row, experiment.experiment_id), int(experiment.experiment_id),
                       experiment.artifact_location, False)
            for row in rows
        ]  # fmt: skip
        build_s = time.process_time() - started

        started = time.process_time()
        connection = client.connection
        with sqlite_traces.write_transaction(connection):
            sqlite_traces.insert_trace_rows(connection, built, "breakdown")
        client.close()  # the last connection's close folds the log into the database
        sql_s = time.process_time() - started
    print(json.dumps({"rows": len(rows), "read_s": read_s, "build_s": build_s, "sql_s": sql_s}))


if __name__ == "__main__":
    main()
