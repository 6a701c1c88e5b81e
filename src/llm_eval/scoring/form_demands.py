"""Class `form_demand`: a question that states the form of its answer («Γράψε την ημερομηνία
ως ΗΗ/ΜΜ», «χωρίς άρθρο», "digits only") is met surely only by one of the key's own listed
forms, so a credited answer in any other form is never sure-correct.

Graders refuse a right value in a form the task forbids («13 Ιουνίου» for ΗΗ/ΜΜ, «Το ψάθινο
καπέλο» without an article, «18342/24-02-2026» for the number alone), and the rules cannot
read every demand («χωρίς τη ζάχαρη»). So: the committed answer equal to a listed form
(after case and accent folding only) stays credited; one the rules can see breaks the
demand (a month name or no digit where digits are demanded, an article where none is
allowed) is wrong; anything else is unsure.
"""

from __future__ import annotations

import re

from llm_eval.scoring.context import Context, Outcome, doubtful, vetoed
from llm_eval.scoring.matchers import answer_date
from llm_eval.scoring.normalize import fold, month_value, tokens

FORMAT_CUES: tuple[str, ...] = (
    r"σε μορφή", r"στη μορφή", r"στην μορφή", r"με μορφή", r"ΗΗ/ΜΜ", r"ΩΩ:ΛΛ", r"Ω:ΛΛ",
    r"ημέρα/μήνας", r"με ψηφία", r"σε ψηφία", r"μόνο ψηφία", r"in the format",
    r"in the form\b", r"DD/MM", r"HH:MM", r"\bdigits\b", r"\bnumerals\b",
)  # fmt: skip
"""Demands on how the value is written: met by a listed form of the key written out whole,
even inside a sentence («Τρίτη 18/03» for ΗΗ/ΜΜ), as graders read them."""
EXCLUSION_CUES: tuple[str, ...] = (
    r"χωρίς", r"στην ονομαστική", r"\bwithout\b", r"\bnominative\b",
)  # fmt: skip
"""Demands on what the answer leaves out or which case it takes («χωρίς άρθρο», «χωρίς τη
ζάχαρη», "without the unit"): met surely only by a listed form alone."""
FORM_DEMAND_CUES: tuple[str, ...] = FORMAT_CUES + EXCLUSION_CUES
"""Every phrase that demands a form, read only in the question's instructions (a sentence
with «Γράψε», «Απάντησε», "Write", "Answer", …), never in its passage («χωρίς νερό»). Not
«μόνο το όνομα» ("the name only"): graders credit a sentence that names the key."""


def _cues(cues: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(fold(cue) for cue in cues))


_FORMAT_RE = _cues(FORMAT_CUES)
_EXCLUSION_RE = _cues(EXCLUSION_CUES)
_DIGITS_RE = _cues((r"ΗΗ/ΜΜ", r"ΩΩ:ΛΛ", r"Ω:ΛΛ", r"ημέρα/μήνας", r"ψηφία", r"\bdigits\b",
                    r"\bnumerals\b", r"DD/MM", r"HH:MM"))  # fmt: skip
_NO_ARTICLE_RE = re.compile(fold(r"χωρίς (?:το |τα )?άρθρ|without (?:the |an? |any )?articles?"))
_INSTRUCTION_RE = re.compile(
    fold(
        r"(?:^|(?<=[.;?!»\n]))[^.;?!»\n]*?\b(?:γράψε|γράψτε|απάντησε|απαντήστε|δώσε|δώστε"
        r"|write|answer|give|reply|respond|express)\b[^;?!\n]*"
    )
)
_ARTICLES = frozenset(
    {"ο", "η", "το", "οι", "τα", "τον", "την", "τη", "του", "τησ", "των", "τουσ", "τισ",
     "the", "a", "an"}
)  # fmt: skip
_EDGES = " \t\n.,;:!·\"'«»*`()[]"
_VALUE_EDGE = r"(?<![\w/:.,\-])(?:{})(?![\w/\-]|[:.,]\d)"


def _listed(text: str) -> str:
    return " ".join(fold(text).split()).strip(_EDGES)


def asks_for_digits(question: str | None) -> bool:
    """Whether the question's own words demand digits («με ψηφία», «ΗΗ/ΜΜ», "in digits")."""
    return _DIGITS_RE.search(instructions(question)) is not None


def instructions(question: str | None) -> str:
    """The question's instructions on its answer (folded), after its passage."""
    if not question:
        return ""
    ask = fold(question.rsplit("»", 1)[-1])
    return " ".join(found.group(0) for found in _INSTRUCTION_RE.finditer(ask))


def _written_out(head: str, forms: tuple[str, ...]) -> bool:
    """Whether a listed form of the key stands whole in `head` («Τρίτη 18/03»)."""
    folded = " ".join(fold(head).split())
    return any(
        re.search(_VALUE_EDGE.format(re.escape(form)), folded)
        for answer in forms
        if (form := _listed(answer))
    )


def form_doubt(ctx: Context) -> Outcome | None:
    """For a credited reply, when the question demands a form: a committed answer not in a
    listed form of the key is wrong if the rules see the break, else unsure."""
    ask = instructions(ctx.key.question)
    format_demand, exclusion = _FORMAT_RE.search(ask), _EXCLUSION_RE.search(ask)
    if format_demand is None and exclusion is None:
        return None
    judged = ctx.credited_head or ctx.head
    words = tokens(judged)
    no_article = _NO_ARTICLE_RE.search(ask) is not None
    head = _listed(judged)
    if words and words[0] in _ARTICLES and not no_article:
        # «Ο Θοδωρής» for a name in the nominative: the article is no part of the form.
        head = head.split(" ", 1)[-1]
    if head in {_listed(answer) for answer in ctx.key.answers}:
        return None
    if exclusion is None and _written_out(judged, ctx.key.answers):
        return None  # «Τρίτη 18/03» writes the demanded form whole
    listed_digits = all(any(c.isdigit() for c in answer) for answer in ctx.key.answers)
    if _DIGITS_RE.search(ask) and listed_digits:
        is_date = answer_date(ctx.answer) is not None
        if is_date and any(month_value(word) is not None for word in words):
            # Graders part on the right date with its month in words under «ΗΗ/ΜΜ»: some hold
            # the reply to the form, others credit the date it names.
            return doubtful(
                "form_demand", f"the task demands digits; {judged!r} names the month in words"
            )
        if not any(c.isdigit() for c in judged):
            return vetoed(f"the task demands digits; {judged!r} has none", "wrong_format")
    if no_article and words and words[0] in _ARTICLES:
        return vetoed(f"the task demands no article; {judged!r} starts with one", "wrong_format")
    demand = (exclusion or format_demand).group(0)  # type: ignore[union-attr]
    return doubtful(
        "form_demand", f"the task demands a form ({demand!r}); {judged!r} is not a listed form"
    )
