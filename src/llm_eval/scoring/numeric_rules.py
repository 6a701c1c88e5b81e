"""The rules of the `numeric` scorer: the boxed answer, a marked answer, the last number."""

from __future__ import annotations

import re
from fractions import Fraction

from llm_eval.scoring.commitment import (
    head_text,
    unfinished_step,
)
from llm_eval.scoring.context import Context, Outcome, doubtful, matched, passed, vetoed
from llm_eval.scoring.cues import without_reason_asides
from llm_eval.scoring.extraction import (
    without_courtesy_tail,
)
from llm_eval.scoring.matchers import (
    answer_number,
)
from llm_eval.scoring.normalize import (
    has_greek,
    number_words,
    tokens,
)
from llm_eval.scoring.numeric import (
    Reading,
    agrees,
    expected_value,
    first_reading,
    has_expression,
    last_reading,
    math_text,
    math_verify_reading,
    stated_reading,
)

# --- Rules of the numeric scorer ----------------------------------------------------------


def expected_number(ctx: Context) -> Fraction | None:
    """The expected answer as a number: digits, words, or a fraction such as "1/2"."""
    value = answer_number(ctx.answer)
    return value if value is not None else expected_value(ctx.answer)


def read_values(text: str, greek: bool, *, first: bool = False) -> Reading | None:
    """The values a final answer states; Math-Verify reads what our rules cannot."""
    reading = first_reading(text, greek) if first else stated_reading(text, greek)
    if reading is None and has_expression(text):
        return math_verify_reading(math_text(text).rsplit("=", 1)[-1].strip())
    return reading


_MIXED_NUMBER_RE = re.compile(r"\d\s*\\[dt]?frac")
_OPERATOR_RE = re.compile(r"\d\s*(?:[-+*/×·^]|\\times|\\cdot|\\div)\s*\d")
_TIMES_RE = re.compile(r"\\times|\\cdot|[×·]")


def repeats_the_question(answer: str, question: str | None) -> bool:
    """Whether an answer that is an arithmetic expression ("14 \\times 12") is the question's
    own expression written back: right in value, but the task's sum is not worked out."""
    if question is None or _OPERATOR_RE.search(answer) is None:
        return False
    return _expression_text(answer) in _expression_text(question)


def _expression_text(text: str) -> str:
    """Text with each operator written one way (signs, LaTeX or words: "14 multiplied by
    12", «14 επί 12»), lower case, and no spaces, `$` or braces."""
    plain = _TIMES_RE.sub("*", text.replace("\\left", "").replace("\\right", "")).lower()
    for words, sign in _OPERATOR_WORDS:
        plain = re.sub(rf"(?<=\d)\s+(?:{words})\s+(?=\d)", sign, plain)
    return re.sub(r"[\s${}]", "", plain.replace("\\div", "/"))


_OPERATOR_WORDS = (
    ("multiplied by|times|επί", "*"),
    ("divided by|διά", "/"),
    ("plus|συν", "+"),
    ("minus|μείον|πλην", "-"),
)


def numeric_boxed_rule(ctx: Context) -> Outcome:
    boxed = ctx.extraction.boxed
    expected = expected_number(ctx)
    if boxed is None or expected is None:
        return passed("no \\boxed{} answer" if boxed is None else "the answer is not a number")
    if ctx.extraction.rule != "boxed":
        return passed("a later answer marker overrides the \\boxed{} answer")
    # Boxes listing alternatives were vetoed earlier, by `boxed_alternatives`.
    if repeats_the_question(boxed, ctx.key.question):
        # Graders split here: the value is right, but the task's own sum is written back.
        return doubtful("expression", f"\\boxed{{{boxed}}} repeats the question's expression")
    given = read_values(boxed, has_greek(ctx.extraction.text))
    if given is not None and agrees(expected, given):
        return matched(f"\\boxed{{{boxed}}} is {_show(expected)}")
    if _MIXED_NUMBER_RE.search(boxed) or (given is None and has_expression(boxed)):
        # "3\frac{1}{2}" is 3½ to a reader and 3 × ½ to a parser: the rules cannot tell.
        return doubtful("expression", f"\\boxed{{{boxed}}} is an expression read two ways")
    return vetoed(
        f"\\boxed{{{boxed}}} states {_shown(given)}, not {_show(expected)}", "boxed_mismatch"
    )


def numeric_marker_rule(ctx: Context) -> Outcome:
    expected = expected_number(ctx)
    if ctx.extraction.rule not in ("marker", "bold") or expected is None:
        return passed("no answer marker" if expected is not None else "the answer is not a number")
    marked = without_reason_asides(ctx.extracted)
    given = read_values(marked, has_greek(ctx.extraction.text), first=True)
    if given is None:
        return passed(f"the marked answer {ctx.extracted!r} has no number")
    if agrees(expected, given):
        return matched(f"the marked answer {ctx.extracted!r} is {_show(expected)}")
    return vetoed(f"the marked answer {ctx.extracted!r} states {_shown(given)}")


def numeric_last_rule(ctx: Context) -> Outcome:
    expected = expected_number(ctx)
    if expected is None:
        return passed("the answer is not a number")
    text = without_courtesy_tail(ctx.extraction.text)
    step = unfinished_step(text)
    if step is not None:
        return vetoed(f"the reply ends on a step still to do: {step!r}", "unfinished")
    closing = text.rstrip().rsplit("\n", 1)[-1]
    if not any(c.isdigit() for c in closing) and number_words(tokens(closing)):
        return passed("the closing line spells its number out: the number_words rule reads it")
    last = last_reading(_with_committed_last_line(text))
    if last is None:
        return passed("the response has no number written in digits")
    written, values = last
    if values is not None and agrees(expected, values):
        return matched(f"the last number in the response, {written[:80]!r}, is {_show(expected)}")
    return vetoed(f"the last number in the response is {written[:80]!r} ({_shown(values)}), "
                 f"not {_show(expected)}")  # fmt: skip


def _with_committed_last_line(text: str) -> str:
    """`text` with its last line cut to its head when the rest is an aside with no working:
    "21 students passed (75% of the class)" states 21, not 75."""
    lines = text.rstrip().splitlines()
    if not lines:
        return text
    last = without_reason_asides(lines[-1]).strip()
    lines[-1] = last
    head = head_text(last)
    # Only an aside that follows the head is dropped ("21 … (75% …)"); brackets that open
    # the line hold the answer itself ("\\( (9+1) \\)").
    if not head or not last.startswith(head) or not any(c.isdigit() for c in head):
        return text
    if not re.search(r"[=≈→]", last[len(head) :]):
        lines[-1] = head
    return "\n".join(lines)


def numeric_words_rule(ctx: Context) -> Outcome:
    expected = expected_number(ctx)
    spelled = number_words(tokens(ctx.extracted))
    if expected is None or not spelled:
        return passed("no number spelled out in the final answer")
    if spelled[-1] == expected:
        return matched(f"the final answer spells {spelled[-1]}")
    return vetoed(f"the final answer spells {spelled[-1]}, not {_show(expected)}")


def _shown(reading: Reading | None) -> str:
    if not reading:
        return "no single rational number"
    return " or ".join(sorted(_show(value) for value in reading))


def _show(value: Fraction | None) -> str:
    if value is None:
        return "no single number"
    if abs(value.numerator) > 10**50:  # too long to print, or to convert to a float
        digits = int(abs(value.numerator).bit_length() * 0.30103) + 1
        return f"a number of about {digits} digits"
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"
