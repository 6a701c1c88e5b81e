"""python_exec and files: what a call can read and write, with real bwrap and real code.

A call sees an allow-list only; these tests plant files where a model would look (the
checkout, its `.env`, copies of answer keys under /tmp and /var/tmp) and write everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_eval.tools.python_exec import PythonExecLimits, command, run_python

pytestmark = pytest.mark.timeout(60)

FAST = PythonExecLimits(timeout_s=3.0, cpu_seconds=10, memory_mb=256)
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project_dir() -> Iterator[Path]:
    """A 0755 directory in the checkout, outside the call's directory."""
    path = Path(tempfile.mkdtemp(prefix=".pyexec_write_probe_", dir=Path(__file__).parent))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def test_writing_to_a_project_directory_fails(project_dir: Path) -> None:
    target = project_dir / "pwned.txt"
    code = f"open({str(target)!r}, 'w').write('x')"
    result = await run_python(code, FAST)
    assert "FileNotFoundError" in result.stderr  # the checkout is not in the allow-list
    assert not target.exists()


async def test_writing_to_shared_tmp_does_not_reach_the_host() -> None:
    target = Path("/tmp") / f"pyexec_probe_{uuid.uuid4().hex}"
    code = f"open({str(target)!r}, 'w').write('x')\nprint('written')"
    try:
        result = await run_python(code, FAST)
        assert result.stdout == "written\n"  # it landed in the private tmpfs
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


async def test_each_call_starts_with_an_empty_private_workdir() -> None:
    code = "import os\nprint(os.getcwd(), sorted(os.listdir('.')), sorted(os.listdir('/tmp')))\n"
    first = await run_python(
        code + "open('f', 'w').write('x')\nopen('/tmp/g', 'w').write('x')", FAST
    )
    second = await run_python(code, FAST)
    # A checkout under /tmp has its interpreter's paths bound into the private /tmp: their
    # top folder is all it may hold before the code writes anything.
    view = command._interpreter_view()
    targets = [view[i + 2] for i, arg in enumerate(view) if arg in ("--ro-bind", "--symlink")]
    bound = sorted({arg.split("/")[2] for arg in targets if arg.startswith("/tmp/")})
    assert first.stdout == second.stdout == f"/sandbox ['main.py'] {bound}\n", first.stderr


async def test_workdir_is_a_size_capped_tmpfs() -> None:
    limits = PythonExecLimits(timeout_s=5.0, file_size_mb=4, tmpfs_mb=8)
    code = (
        "import os\n"
        "written = 0\n"
        "try:\n"
        "    for i in range(40):\n"
        "        with open(f'chunk{i}', 'wb') as f:\n"
        "            f.write(b'x' * (1 << 20))\n"
        "        written += 1\n"
        "finally:\n"
        "    print(written, flush=True)\n"
    )
    result = await run_python(code, limits)
    assert "No space left on device" in result.stderr, result.stdout + result.stderr
    assert int(result.stdout) < 8
    assert "workdir_tmpfs" in result.isolation


def _read_attempt(path: Path) -> str:
    """Code that prints READ plus the content of `path`, or the error class."""
    return (
        "try:\n"
        f"    print('READ', open({str(path)!r}).read()[:80])\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__)\n"
    )


@pytest.fixture
def dotenv_in_checkout() -> Iterator[Path]:
    """A world-readable `.env` in the checkout root (an existing one is left untouched)."""
    path = REPO_ROOT / ".env"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        yield path
        return
    with open(fd, "w") as dotenv:
        dotenv.write("OPENAI_API_KEY=sk-pyexec-test-dotenv\n")
    try:
        path.chmod(0o644)  # whatever the umask
        yield path
    finally:
        path.unlink(missing_ok=True)


async def test_project_checkout_and_its_dotenv_are_not_readable(dotenv_in_checkout: Path) -> None:
    answer_key = REPO_ROOT / "data" / "sample_math.jsonl"
    assert answer_key.is_file()
    code = (
        _read_attempt(answer_key)
        + _read_attempt(dotenv_in_checkout)
        + "import os, sympy\n"  # site-packages of the venv inside the checkout still import
        + f"print('LISTING', os.path.exists({str(REPO_ROOT / 'data')!r}), sympy.Integer(6) * 7)\n"
    )
    result = await run_python(code, PythonExecLimits(timeout_s=20.0, memory_mb=256))
    lines = result.stdout.splitlines()
    assert lines[:2] == ["FileNotFoundError", "FileNotFoundError"], result.stdout + result.stderr
    assert lines[2] == "LISTING False 42"


@pytest.fixture
def planted_files() -> Iterator[list[Path]]:
    """An answer-key copy in a fresh /tmp folder and a 0644 `.env` in another checkout."""
    answers = Path(tempfile.mkdtemp(prefix="xyz_")) / "aimo3.jsonl"
    answers.write_text('{"id": "p1", "answer": "4242"}\n')
    other = Path(tempfile.mkdtemp(prefix="other_checkout_", dir="/var/tmp")) / ".env"
    other.write_text("OPENAI_API_KEY=sk-planted-0123456789\n")
    for path in (answers.parent, other.parent):
        path.chmod(0o755)
    for path in (answers, other):
        path.chmod(0o644)
    try:
        yield [answers, other]
    finally:
        for path in (answers, other):
            shutil.rmtree(path.parent, ignore_errors=True)


async def test_files_planted_elsewhere_on_disk_are_not_visible(planted_files: list[Path]) -> None:
    code = "".join(_read_attempt(path) for path in planted_files)
    code += "import os\nprint(sorted(os.listdir('/')))\n"
    result = await run_python(code, FAST)
    lines = result.stdout.splitlines()
    assert lines[:2] == ["FileNotFoundError", "FileNotFoundError"], result.stdout + result.stderr
    # Only the allow-list exists at the top (plus the parents of bound paths, e.g. the venv).
    top = set(json.loads(lines[2].replace("'", '"')))
    assert {"etc", "home", "var", "run", "mnt", "srv", "opt"}.isdisjoint(top), top
    assert "4242" not in result.stdout and "sk-planted" not in result.stdout


def test_a_checkout_under_tmp_runs_its_own_venv_s_interpreter(tmp_path: Path) -> None:
    # A clone under /tmp (as a CI job's often is) has its venv under the path the sandbox
    # replaces with a private /tmp: the venv's interpreter must still be there.
    assert str(tmp_path).startswith("/tmp/")
    venv = tmp_path / "clone" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    harness = (
        "import asyncio\n"
        "from llm_eval.tools.python_exec import PythonExecLimits, run_python\n"
        "limits = PythonExecLimits(timeout_s=20.0, cpu_seconds=10, memory_mb=256)\n"
        "r = asyncio.run(run_python('print(6 * 7)', limits))\n"
        "print(repr(r.stdout), repr(r.stderr))\n"
    )
    source = Path(__file__).resolve().parents[2] / "src"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(source), *site.getsitepackages()]))
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", harness], env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("'42\\n'"), done.stdout


async def test_only_the_call_s_private_directories_are_writable() -> None:
    # Walks the whole file tree as the sandbox sees it, trying to create a file in every
    # directory: the only places it can are the call's own tmpfs mounts, which vanish with it.
    code = (
        "import json, os\n"
        "writable = []\n"
        "stack = ['/']\n"
        "while stack:\n"
        "    path = stack.pop()\n"
        "    try:\n"
        "        os.close(os.open(os.path.join(path, '.probe'), os.O_CREAT | os.O_EXCL, 0o600))\n"
        "        writable.append(path)\n"
        "        continue\n"
        "    except OSError:\n"
        "        pass\n"
        "    try:\n"
        "        with os.scandir(path) as entries:\n"
        "            for e in entries:\n"
        "                if e.is_dir(follow_symlinks=False) and e.path not in ('/proc', '/sys'):\n"
        "                    stack.append(e.path)\n"
        "    except OSError:\n"
        "        pass\n"
        "print(json.dumps({'cwd': os.getcwd(), 'writable': sorted(writable)}))\n"
    )
    result = await run_python(code, PythonExecLimits(timeout_s=20.0, cpu_seconds=20))
    seen = json.loads(result.stdout)
    assert set(seen["writable"]) <= {seen["cwd"], "/tmp", "/dev/shm"}, seen["writable"]
