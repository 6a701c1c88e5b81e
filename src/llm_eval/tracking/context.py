"""Where and under what identity a stage is tracked. Pure Python: no MLflow import here.

- the repository root is `DVC_ROOT` when DVC set it (a queued experiment runs in a temporary
  copy under `.dvc/tmp/exps`, and its MLflow store must still be the real repository's),
  else the config root;
- the store is `sqlite:///<root>/mlruns/mlflow.db` with artifacts in `<root>/mlruns/artifacts`
  (absolute paths), unless `MLFLOW_TRACKING_URI` names another store;
- tracking is on when `tracking.enabled` in params.yaml says so, and `LLM_EVAL_TRACKING`
  (`0`/`1`) overrides it either way; a directory without params.yaml is not tracked unless
  the variable asks for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_eval.redaction import is_secret_name, redact, redact_settings

ENV_SWITCH = "LLM_EVAL_TRACKING"
ENV_PIPELINE_ID = "LLM_EVAL_PIPELINE_ID"
STORE_DIR = "mlruns"
DB_FILE = "mlflow.db"
ARTIFACTS_DIR = "artifacts"
DEFAULT_EXPERIMENT = "llm-eval"
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class StageContext:
    """Everything about one stage execution that becomes MLflow tags, params or locations."""

    stage: str
    config_root: Path
    repo_root: Path
    tracking_uri: str
    artifact_location: str | None
    experiment: str
    params: dict[str, Any]
    git_commit: str | None
    exp_name: str | None
    dvc_stage: str | None
    baseline_rev: str | None
    pipeline_key: str
    extra_tags: dict[str, str] = field(default_factory=dict)
    started_ms: int | None = None
    """When the stage's process started (ms since the epoch): its runs start then, not when
    logging began; None: MLflow's default (now)."""
    ended_ms: int | None = None
    """When the stage's own work ended, before any logging: its runs end then."""

    def label(self) -> str:
        """What tells this pipeline execution apart in run names: the DVC experiment's name,
        else the commit's and the parent key's first characters (two executions of one
        commit with other params or in other `dvc repro` calls get other keys)."""
        if self.exp_name:
            return self.exp_name
        commit = self.git_commit[:7] if self.git_commit else "no-commit"
        return f"{commit}-{self.pipeline_key[:6]}"

    def base_tags(self) -> dict[str, str]:
        """Tags every run of this execution carries (stage and model are added per run)."""
        tags = {
            "llm_eval.stage": self.stage,
            "llm_eval.pipeline_key": self.pipeline_key,
            "git.commit": self.git_commit or "unknown",
            "dvc.exp_name": self.exp_name or "",
            # A stage DVC ran, or a plain command: both log to the same experiment.
            "llm_eval.source": "dvc" if self.dvc_stage else "cli",
        }
        if self.dvc_stage:
            tags["dvc.stage"] = self.dvc_stage
        if self.baseline_rev:
            tags["dvc.baseline_rev"] = self.baseline_rev
        return {**tags, **self.extra_tags}


def read_params(config_root: Path) -> dict[str, Any] | None:
    """params.yaml under `config_root` as plain data, with configs/models.yaml's `models`
    folded in (MLflow params name a model's settings `models.<name>.<key>`); None when there
    is no params.yaml or it is broken. The config stage's one reader does the reading."""
    from llm_eval.config.loading import read_params as read

    return read(config_root)


def tracking_enabled(config_root: Path | str = ".", params: dict[str, Any] | None = None) -> bool:
    """Whether a stage run from `config_root` is tracked (cheap: no MLflow import)."""
    switch = os.environ.get(ENV_SWITCH, "").strip().lower()
    if switch:
        return switch not in _FALSE
    params = params if params is not None else read_params(Path(config_root))
    if params is None:
        return False
    tracking = params.get("tracking") or {}
    return bool(tracking.get("enabled", True)) if isinstance(tracking, dict) else True


def repo_root(config_root: Path) -> Path:
    """`DVC_ROOT` when set (the real repository, also in queued experiments), else the root."""
    dvc_root = os.environ.get("DVC_ROOT")
    return Path(dvc_root).resolve() if dvc_root else config_root.resolve()


def store_locations(root: Path) -> tuple[str, str | None]:
    """(tracking URI, artifact location for a new experiment); the URI may come from the env."""
    override = os.environ.get("MLFLOW_TRACKING_URI")
    if override:
        return override, None
    store = root / STORE_DIR
    return f"sqlite:///{store / DB_FILE}", (store / ARTIFACTS_DIR).as_uri()


def git_commit(cwd: Path) -> str | None:
    """`git rev-parse HEAD` in `cwd`; None without git or without a commit."""
    return git_output(cwd, "rev-parse", "HEAD")


def git_output(cwd: Path, *args: str) -> str | None:
    """The stripped output of `git ARGS` in `cwd`; None if git is missing, fails or says nothing."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    output = done.stdout.strip()
    return output if done.returncode == 0 and output else None


def invocation_id() -> str:
    """What tells two executions of the same pipeline apart.

    `LLM_EVAL_PIPELINE_ID` if set; else the nearest ancestor `dvc` process (pid and start
    time, so a reused pid is a different id): every stage of one `dvc repro` or `dvc exp run`
    has the same one. Outside DVC it is empty, so plain CLI calls group by commit and params.
    """
    explicit = os.environ.get(ENV_PIPELINE_ID)
    if explicit:
        return explicit
    pid = os.getppid()
    for _ in range(16):
        if pid <= 1:
            break
        stat = _proc_stat(pid)
        if stat is None:
            break
        if _is_dvc(pid):
            return f"dvc:{pid}:{stat[19]}"
        pid = int(stat[1])
    return ""


def _proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (index 1 is the parent pid)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _is_dvc(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    names = [Path(arg.decode(errors="replace")).name for arg in argv[:3]]
    return "dvc" in names or (len(argv) > 2 and argv[1] == b"-m" and argv[2] == b"dvc")


def params_digest(config_root: Path) -> str:
    """sha256 of the settings' bytes: params.yaml, then configs/models.yaml (empty if absent)."""
    digest = hashlib.sha256()
    for name in ("params.yaml", "configs/models.yaml"):
        path = config_root / name
        digest.update(path.read_bytes() if path.is_file() else b"")
        digest.update(b"\0")
    return digest.hexdigest()


def pipeline_key(commit: str | None, exp_name: str | None, digest: str, invocation: str) -> str:
    """The parent run's identity: one per (commit, experiment, params, invocation)."""
    payload = json.dumps([commit or "", exp_name or "", digest, invocation])
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def process_started_ms() -> int | None:
    """When this process started, from the kernel (/proc): the stage's real start, whatever
    ran before tracking was imported; None where /proc does not tell."""
    stat = _proc_stat(os.getpid())
    try:
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        ticks = int(stat[19]) if stat else None
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    if ticks is None:
        return None
    return int((boot + ticks / os.sysconf("SC_CLK_TCK")) * 1000)


def build_context(
    stage: str, config_root: Path | str, params: dict[str, Any], ended_ms: int | None = None
) -> StageContext:
    """Resolve every location and identity of one stage execution (`ended_ms`: when its
    work ended, if it is logged as a run)."""
    root = Path(config_root).resolve()
    repo = repo_root(root)
    uri, artifacts = store_locations(repo)
    commit = git_commit(root) or os.environ.get("DVC_EXP_BASELINE_REV")
    exp_name = os.environ.get("DVC_EXP_NAME") or None
    return StageContext(
        stage=stage,
        config_root=root,
        repo_root=repo,
        tracking_uri=uri,
        artifact_location=artifacts,
        experiment=experiment_name(params),
        params=params,
        git_commit=commit,
        exp_name=exp_name,
        dvc_stage=os.environ.get("DVC_STAGE") or None,
        baseline_rev=os.environ.get("DVC_EXP_BASELINE_REV") or None,
        pipeline_key=pipeline_key(commit, exp_name, params_digest(root), invocation_id()),
        started_ms=process_started_ms() if ended_ms is not None else None,
        ended_ms=ended_ms,
    )


# --------------------------------------------------------------------------- params


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys; lists stay values (logged as JSON)."""
    if not isinstance(data, dict):
        return {prefix: data} if prefix else {}
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            flat.update(flatten(value, name))
        else:
            flat[name] = value
    return flat


def is_secret_param(name: str) -> bool:
    """A param whose name looks like a key, token or secret; `*_env` names a variable only."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf.endswith("_env"):
        return False
    return any(is_secret_name(part) for part in name.split("."))


def safe_params(data: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Flattened params as MLflow strings, secrets dropped, headers and every value redacted."""
    params: dict[str, str] = {}
    for name, value in flatten(redact_settings(data), prefix).items():
        if is_secret_param(name):
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        params[name] = redact(text)[:6000]
    return params


def stage_params(params: dict[str, Any], models: list[str]) -> dict[str, str]:
    """Params of a model stage: `model.*` (one model), `runner.*`, `run.benchmarks`."""
    logged: dict[str, str] = {}
    entries = _section(params, "models")
    if len(models) == 1:
        logged.update(safe_params(entries.get(models[0]) or {}, "model"))
    else:
        for name in models:
            logged.update(safe_params(entries.get(name) or {}, f"models.{name}"))
    logged.update(safe_params(params.get("runner") or {}, "runner"))
    run = _section(params, "run")
    logged.update(safe_params({"benchmarks": run.get("benchmarks") or []}, "run"))
    return logged


def pipeline_params(params: dict[str, Any]) -> dict[str, str]:
    """Params of the parent run: the selection, the runner and every selected model."""
    run = _section(params, "run")
    models = [str(name) for name in run.get("models") or []]
    logged = safe_params({"models": models, "benchmarks": run.get("benchmarks") or []}, "run")
    entries = _section(params, "models")
    for name in models:
        logged.update(safe_params(entries.get(name) or {}, f"models.{name}"))
    logged.update(safe_params(params.get("runner") or {}, "runner"))
    return logged


def experiment_name(params: dict[str, Any]) -> str:
    """The MLflow experiment the stages log to (`tracking.experiment` in params.yaml)."""
    return str(_section(params, "tracking").get("experiment") or DEFAULT_EXPERIMENT)


def _section(params: dict[str, Any], key: str) -> dict[str, Any]:
    """`params[key]` when it is a mapping, else an empty one."""
    value = params.get(key)
    return value if isinstance(value, dict) else {}
