"""People's verdicts on replies the rules could not settle, kept in a versioned JSONL file.

A decision names the reply it settles by (benchmark, task id, expected answer, digest of the
reply): the same reply in any run, model or epoch is settled once, and a decision made under
an old answer no longer applies once the key in `data/` changes. The file is append-only;
for one key the last line wins (a later decision, e.g. one pulled from MLflow, replaces an
earlier one). `apply_reviews` runs after the rules in `score`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from llm_eval.errors import ConfigError, Problem
from llm_eval.schemas import TraceRow

REVIEWS_FILE = Path("reviews") / "verdicts.jsonl"
"""Where people's verdicts live, relative to the config root (a `score` dependency)."""

ReviewKey = tuple[str, str, str, str]
"""What a decision settles: (benchmark, task id, expected answer, sha256 of the reply)."""

SureVerdict = Literal["correct", "incorrect"]


def reply_digest(reply: str | None) -> str:
    """sha256 (hex) of a reply, whitespace at its ends stripped and nothing else changed."""
    return hashlib.sha256((reply or "").strip().encode("utf-8")).hexdigest()


def review_key(row: TraceRow) -> ReviewKey:
    """The key a decision on this row's reply is filed under."""
    return (row.benchmark, row.task_id, row.answer, reply_digest(row.response))


def key_digest(key: ReviewKey) -> str:
    """A short stable name of a key (MLflow metadata carries it instead of the answer)."""
    return hashlib.sha256("\0".join(("llm-eval-review", *key)).encode("utf-8")).hexdigest()[:32]


def now_stamp() -> str:
    """The current time as the files write it (ISO 8601, UTC, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class KeyedRecord(BaseModel):
    """Fields every line of a verdict file shares: the key it settles and when."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    benchmark: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    answer: str = Field(min_length=1, description="The expected answer the reply was judged by.")
    reply_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    timestamp: str = Field(description="When it was decided (ISO 8601).")

    @field_validator("timestamp")
    @classmethod
    def _is_iso(cls, value: str) -> str:
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"timestamp {value!r} is not ISO 8601") from exc
        if stamp.tzinfo is None:
            raise ValueError(f"timestamp {value!r} has no time zone")
        return value

    @property
    def key(self) -> ReviewKey:
        return (self.benchmark, self.task_id, self.answer, self.reply_sha256)

    @property
    def decided_at(self) -> datetime:
        return datetime.fromisoformat(self.timestamp)


class Review(KeyedRecord):
    """One person's verdict on one reply."""

    verdict: SureVerdict
    reviewer: str = Field(min_length=1)
    note: str | None = None
    via: Literal["terminal", "mlflow"] = Field(
        "terminal", description="`llm-eval review` in a terminal, or pulled from MLflow."
    )


R = TypeVar("R", bound=KeyedRecord)


def read_records(path: Path, schema: type[R]) -> list[R]:
    """Every line of a verdict file, in order; a missing file is empty.

    Lines starting with `#` are comments (the committed file starts with one, so that it is
    never empty: DVC warns about an empty dependency). Every bad line is reported
    (file:line), not only the first.
    """
    if not path.is_file():
        return []
    records: list[R] = []
    problems: list[Problem] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):  # the file's header, blank lines
            continue
        try:
            records.append(schema.model_validate(json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), number, f"not JSON: {exc.msg}"))
        except ValidationError as exc:
            for error in exc.errors():
                where = ".".join(str(part) for part in error["loc"]) or "line"
                problems.append(Problem(str(path), number, f"{where}: {error['msg']}"))
    if problems:
        raise ConfigError(problems)
    return records


def latest(records: Iterable[R]) -> dict[ReviewKey, R]:
    """One record per key: the last line wins."""
    return {record.key: record for record in records}


def read_reviews(path: Path) -> dict[ReviewKey, Review]:
    """The current decision of each key in the file."""
    return latest(read_records(path, Review))


def append_records(path: Path, records: Sequence[KeyedRecord]) -> None:
    """Add lines to a verdict file (created with its folder if need be), flushed to disk."""
    import os

    if not records:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(record.model_dump_json(exclude_none=True) + "\n" for record in records)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def apply_reviews(rows: Sequence[TraceRow], reviews: dict[ReviewKey, Review]) -> list[TraceRow]:
    """Rows whose reply a person decided carry that verdict, `source` `human`.

    The rule's method, unsure reason and detail stay on the score, for the record. Error
    rows (no reply scored) are left alone.
    """
    if not reviews:
        return list(rows)
    return [_reviewed(row, reviews.get(review_key(row))) for row in rows]


def _reviewed(row: TraceRow, review: Review | None) -> TraceRow:
    if review is None or row.score is None or row.status == "error":
        return row
    return decided(
        row, review.verdict, "human", by=review.reviewer, at=review.timestamp, note=review.note
    )


def decided(
    row: TraceRow,
    verdict: Literal["correct", "incorrect"],
    source: Literal["human", "judge"],
    *,
    by: str,
    at: str,
    note: str | None,
) -> TraceRow:
    """`row` with a verdict someone other than the rules decided; the rule's method and
    unsure class stay on the row for the record."""
    assert row.score is not None  # only scored rows are decided
    score = row.score.model_copy(
        update={
            "verdict": verdict,
            "correct": verdict == "correct",
            "source": source,
            "decided_by": by,
            "decided_at": at,
            "decision_note": note,
        }
    )
    return row.model_copy(update={"score": score, "status": verdict})
