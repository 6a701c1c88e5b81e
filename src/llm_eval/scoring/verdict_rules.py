"""Rules every scorer kind runs about what the reply commits to: several answer lines, a
range, an ordinal, a declined name, an answer under a condition, and the verdict when no
rule found the key (sure wrong, or unsure with its class: `unsure.py`)."""

from __future__ import annotations

import re
from fractions import Fraction

from llm_eval.scoring.clock import key_minutes, times_in
from llm_eval.scoring.context import (
    Context,
    Outcome,
    doubtful,
    matched,
    passed,
    rival_in_commitment,
    rival_of,
    search,
    vetoed,
)
from llm_eval.scoring.cues import conditions, otherwise, several_answers, states_range
from llm_eval.scoring.forms import answer_ordinal, form_of, name_token, ordinals_in
from llm_eval.scoring.matchers import (
    NEGATORS,
    answer_content,
    answer_date,
    answer_number,
    numbers_in,
    tokens_equal,
)
from llm_eval.scoring.normalize import has_greek, tokens
from llm_eval.scoring.numeric import expected_value
from llm_eval.scoring.unsure import name_form_outcome, open_answer, undecided


def several_answers_rule(ctx: Context) -> Outcome:
    """Closing answer lines with different answers («Απάντηση: Πάτρα» / «Απάντηση: Βόλος»)."""
    answers = several_answers(ctx.extraction.text)
    if answers and not _one_answer_in_two_scripts(answers):
        return vetoed(f"the closing answer lines give {list(answers)}", "several_answers")
    return passed("one closing answer")


def _one_answer_in_two_scripts(answers: tuple[str, ...]) -> bool:
    """«Απάντηση: Στέλλα» over "Answer: Stella": one answer, written in two scripts."""
    written = [tokens(answer) for answer in answers]
    first = written[0]
    return all(
        len(other) == len(first)
        and all(tokens_equal(a, b, transliterate=True) for a, b in zip(first, other, strict=True))
        for other in written[1:]
    )


def range_rule(ctx: Context) -> Outcome:
    """A range ("960–1000") or a tolerance ("360 ± 10") states no one value, when the key is
    one number."""
    if states_range(ctx.extracted, ctx.answer) is None:
        return passed("no range in the answer")
    if answer_number(ctx.answer) is None and expected_value(ctx.answer) is None:
        return passed("the key is not a number")
    if answer_date(ctx.answer) is not None:
        return passed("the key is a date («12-5» is the 12th of May)")
    where = ctx.extracted if ctx.extraction.rule in ("marker", "boxed", "bold") else ctx.head
    found = states_range(where, ctx.answer)
    if found is not None:
        return vetoed(f"the answer gives the range {found!r}, not one value", "range")
    return passed("no range in the answer")


_PLACE_RE = re.compile(r"θέση|θεση|όροφο|οροφο|\bplace\b|\bposition\b|\bfloor\b", re.I)


_DURATION_RE = re.compile(
    r"(\d+)\s*(?:ώρα|ώρες|ωρα|ωρες|ώρας|hours?|hrs?|h)\s*(?:και|and|,)?\s*(\d+)\s*"
    r"(?:λεπτά|λεπτα|λεπτό|minutes?|mins?|m)\b",
    re.I,
)


def compound_duration_rule(ctx: Context) -> Outcome:
    """ "1 ώρα και 50 λεπτά" is 110 minutes: against a key in minutes it counts as its total,
    not as the "50" it ends on (unless the reply goes on to state another number)."""
    found = _DURATION_RE.search(ctx.extracted)
    if found is None or _DURATION_RE.search(ctx.answer):
        return passed("no duration in hours and minutes")
    if any(word in ctx.answer.casefold() for word in ("ώρ", "ωρ", "hour")):
        return passed("the key is in hours")
    if any(c.isdigit() for c in _DURATION_RE.sub(" ", ctx.extracted)):
        return passed("the reply states another number beside the duration")
    total = int(found.group(1)) * 60 + int(found.group(2))
    if numbers_in(ctx.answer) == [total]:
        return matched(f"{found.group(0)!r} is {total} minutes")
    return vetoed(f"{found.group(0)!r} is {total} minutes, not {ctx.answer!r}")


def ordinal_rule(ctx: Context) -> Outcome:
    """An ordinal key («δεύτερος», "second") against the first ordinal the reply commits to,
    in words or digits («2η», "2nd"); class `ordinal`: beside a decoy it is not credited."""
    expected = next(
        (value for answer in ctx.key.answers if (value := answer_ordinal(answer)) is not None),
        None,
    )
    if expected is None and ctx.answer.strip().isdigit():
        # A number key answered as an ordinal («8η θέση» for "8") when the question asks
        # for a place; otherwise an ordinal is not the cardinal.
        asks_place = _PLACE_RE.search(ctx.key.question or "") is not None
        if asks_place and int(ctx.answer) in ordinals_in(ctx.head):
            return matched(f"{ctx.head!r} gives the key as an ordinal")
        return passed("no ordinal form of the key")
    if expected is None:
        return passed("the key is not an ordinal")
    given = ordinals_in(ctx.head) or ordinals_in(ctx.extracted)
    if not given:
        return passed(f"no ordinal in {ctx.head!r}")
    if given[0] == expected:
        # A decoy beside the ordinal ("5th floor, reception") is a second candidate.
        rival = rival_in_commitment(ctx, ctx.head) or rival_in_commitment(ctx, ctx.extracted)
        if rival is not None:
            return vetoed(
                f"{ctx.head!r} gives the ordinal beside the decoy {rival!r}", "distractor"
            )
        return matched(f"the ordinal {given[0]} of {ctx.head!r} is the key's")
    return vetoed(f"the ordinal {given[0]} of {ctx.head!r} is not {expected}")


_NOMINATIVE_DEMAND_RE = re.compile(r"ονομαστικ|\bnominative\b", re.I)
_NO_NUMBER_DEMAND_RE = re.compile(
    r"χωρ[ίι]ς\s+(?:τον\s+|το\s+)?αριθμ|\bwithout\s+(?:the\s+|a\s+)?(?:house\s+)?number"
    r"|\bno\s+(?:house\s+)?numbers?\b",
    re.I,
)
_OBLIQUE_WORDS = frozenset(
    {"του", "τησ", "τον", "την", "τη", "στου", "στησ", "στον", "στην", "στη", "απο", "με",
     "για", "σε"}
)  # fmt: skip


def form_demand_rule(ctx: Context) -> Outcome:
    """Class `form_demand`: the question's explicit demand on the answer's form, read from
    its words: «στην ονομαστική» ("nominative") refuses the key's name after an article or
    preposition of another case («τον Ορέστη»); «χωρίς αριθμό» ("without the number")
    refuses a committed answer with a number when the key has none («Κανάρη 14»)."""
    question = ctx.key.question or ""
    if not question:
        return passed("no question to demand a form")
    ask = question.rsplit("»", 1)[-1]
    head = ctx.head
    no_number = _NO_NUMBER_DEMAND_RE.search(ask) and not any(c.isdigit() for c in ctx.answer)
    if no_number and any(c.isdigit() for c in head):
        return vetoed(f"the task demands no number; {head!r} gives one", "wrong_format")
    if _NOMINATIVE_DEMAND_RE.search(ask):
        names = frozenset(
            token for answer in ctx.key.answers if (token := name_token(answer)) is not None
        )
        words = tokens(head)
        for index, word in enumerate(words):
            if index and words[index - 1] in _OBLIQUE_WORDS and form_of(word, names):
                return vetoed(
                    f"the task demands the nominative; {head!r} gives another case",
                    "wrong_form",
                )
    return passed("no form demand, or the committed answer meets it")


def clock_time_rule(ctx: Context) -> Outcome:
    """Class `clock_time`: a key on the 24-hour clock against the times of day the committed
    answer states in any writing («στις 3 το απόγευμα», "3pm" for 15:00): see `clock.py`."""
    expected = key_minutes(ctx.answer)
    if expected is None:
        return passed("the key is not a time of day")
    given = times_in(ctx.head) or times_in(ctx.extracted)
    if not given:
        return passed(f"no time of day in {ctx.head!r}")
    if all(value == expected for value in given):
        return matched(f"{ctx.head!r} states the time {ctx.answer!r}")
    if expected not in given:
        return vetoed(f"{ctx.head!r} states another time of day than {ctx.answer!r}")
    return passed(f"{ctx.head!r} states several times of day")


def name_form_rule(ctx: Context) -> Outcome:
    """A declined form of the key's name («του Μαρίνου»): see `unsure.name_form_outcome`."""
    return name_form_outcome(ctx)


_STEM_KEEP = 3
"""Letters an inflection may change at the end of a word («εκνεύρισε», «εκνευρίστηκε»)."""
_STEM_MIN = 5


def stem_coverage_rule(ctx: Context) -> Outcome:
    """An open answer whose every content word the committed answer gives in another form
    («εκνευρίστηκε» for «τον εκνεύρισε»), with no negation: the key in other inflections."""
    if not open_answer(ctx):
        return passed("the key is not an open answer")
    needed = answer_content(ctx.answer)
    if not needed or any(len(word) < _STEM_MIN for word in needed):
        return passed("a short word of the key has no stem to compare")
    stems = [word[: max(_STEM_MIN, len(word) - _STEM_KEEP)] for word in needed]

    def found(text: str) -> bool:
        words = tokens(text)
        if NEGATORS.intersection(words):
            return False  # «δεν εκνευρίστηκε» negates what it names
        return all(any(word.startswith(stem) for word in words) for stem in stems)

    return search(ctx, found, "every content word of the key, in another form")


def undecided_rule(ctx: Context) -> Outcome:
    """No rule found the key: a committed decoy, number or date is wrong; an open answer or
    another language is unsure; anything else is wrong."""
    return undecided(ctx)


def condition_doubt(ctx: Context) -> Outcome | None:
    """For a credited reply: a condition offering another answer («αλλά αν …, Πάτρα») makes
    it unsure; one answer per condition («Αν …, Πάτρα· αν …, Βόλο», «Αν …, Πάτρα· αλλιώς
    Βόλο», "if …, X, otherwise Y") makes it wrong."""
    where = ctx.extraction.context or ctx.span
    found = conditions(where)
    branch = otherwise(where)
    if branch is not None and (found or _other_candidate(ctx, where[branch.end() :])):
        # «Αν …, από το περίπτερο· αλλιώς από τον Λευτέρη»: an outcome for each branch.
        return vetoed(
            f"{where.strip()!r} gives one answer per branch of a condition", "conditional"
        )
    if not found:
        return None
    after = where[found[0].start() :]
    if not tokens(where[: found[0].start()]):
        # "If x = 3, y = 7" states its answer under the condition; «Αν …, Πάτρα· αν …,
        # Βόλο» gives one answer per condition and commits to none.
        if len(found) > 1:
            return vetoed(f"{where.strip()!r} gives one answer per condition", "conditional")
        return None
    other = _other_candidate(ctx, after)
    if other is None:
        return None
    return doubtful("conditional", f"{where.strip()!r} offers {other!r} under a condition")


_ASKED_RE = re.compile(r"\s*(?:\?+|;(?=\s*(?:$|\n|[^\W\d_])))")
"""A question mark right after the committed answer: "?" or the Greek «;», unless «;» is
followed by a digit or a bracket (a list separator)."""


def question_doubt(ctx: Context) -> Outcome | None:
    """For a credited reply: the committed answer asked, not stated («Λευτέρης;»,
    "Kate?"). Another candidate asked after it («Λευτέρης; Φώτης;») makes it wrong; alone
    it is unsure (class `hedge`)."""
    text = ctx.extraction.text
    head = ctx.head.strip()
    at = text.find(head) if head else -1
    if at < 0:
        return None
    rest = text[at + len(head) :]
    asked = _ASKED_RE.match(rest)
    greek = has_greek(head) or has_greek(ctx.key.question or "")
    if asked is None or (asked.group(0).strip() == ";" and not greek):
        return None
    after = rest[asked.end() :].split("\n", 1)[0]
    other = _other_candidate(ctx, after)
    if other is not None:
        return vetoed(f"{head!r} and {other!r} are both asked, neither stated", "hedged")
    return doubtful("hedge", f"the reply asks {head!r} rather than stating it")


def _other_candidate(ctx: Context, text: str) -> str | None:
    """A decoy or a number other than the key that `text` offers."""
    rival = rival_of(ctx, text)
    if rival is not None:
        return rival
    for distractor in ctx.key.distractors:
        if set(tokens(distractor)) & set(tokens(text)):
            return distractor
    # Without decoys, another name the question writes with a capital ("unless Ben is
    # shorter", for Carl) is the other candidate; a sentence's first word is no name.
    key_words = {word for answer in ctx.key.answers for word in tokens(answer)}
    asked = _task_names(ctx.key.question or "") - key_words
    named = asked & _task_names(text)
    if named:
        return sorted(named)[0]
    expected = answer_number(ctx.answer)
    if expected is not None:
        others = [v for v in numbers_in(text, has_greek(text)) if v != expected]
        if others:
            return _show(others[0])
    return None


def _task_names(text: str) -> frozenset[str]:
    """The folded words `text` writes with a capital other than at a sentence start."""
    return frozenset(
        token
        for found in re.finditer(r"(?<![.!?;·:«\"\n]\s)(?<!^)\b[^\W\d_]+", text)
        if found.group(0)[0].isupper() and found.start() > 0
        for token in tokens(found.group(0))
    )


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(value)
