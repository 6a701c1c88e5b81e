"""Class `hedge`: an uncertainty or approximation marker on the committed answer.

A reply that finds the key but says it only approximately ("Περίπου 530.", "about 888",
"18/03 ± 1 ημέρα") or only as a guess ("my best guess is 57447, but it may be wrong") has not
committed to it: careful graders refuse it in every labelled set. One candidate offered as
probable («Μάλλον ναι.», "Probably Mia.") or with a belief marker ("I think", «νομίζω») is
milder, and graders part on it: unsure, class `hedge`. Every marker is listed in
`HEDGE_MARKERS`, with the verdict it gives.

Where a marker counts: an approximation, a tolerance or a guess anywhere in the committed
answer's sentence to the end of its line (the extraction's context); a probability or belief
word only in the clause of that sentence that holds the answer, or in a clause of its own
("12, probably"). Quotations («…», "…") and reason clauses ("because …", «γιατί …», «αφού
…») never count: there a probability describes the facts, not the answer. An
approximation counts only next to the key's own number ("about 50 more" beside 530 is a
comparison). A marker the task itself uses is not the reply's doubt: «Η πτήση διαρκεί
περίπου 45 λεπτά» makes "Περίπου 45 λεπτά" right, and a question that asks to round or
estimate makes an approximate answer the one it wants. `≈` is left out: "x ≈ 11" is how a
worked answer writes the value it rounded to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from llm_eval.scoring.clock import key_minutes
from llm_eval.scoring.context import Context, Outcome, doubtful, vetoed
from llm_eval.scoring.cues import accent_tolerant
from llm_eval.scoring.matchers import answer_content, content_tokens, numbers_in
from llm_eval.scoring.normalize import fold_text, tokens
from llm_eval.scoring.sentences import split_sentences


@dataclass(frozen=True, slots=True)
class HedgeClass:
    """A class of hedge markers: the verdict it gives a reply that finds the key, and the
    markers (regular expressions, Greek ones accent-tolerant)."""

    verdict: Literal["incorrect", "unsure"]
    meaning: str
    markers: tuple[str, ...]
    reach: Literal["line", "clause"] = "line"
    """Where a marker counts: the answer's line from its sentence on, or only the clause of
    that sentence that holds the answer and a clause that holds nothing but the marker ("12,
    probably"): a probability elsewhere is about the facts ("Mia. Kate likely has the cat.",
    «Ναι, θα έρθει, μάλλον με το λεωφορείο»)."""


HEDGE_MARKERS: dict[str, HedgeClass] = {
    "approximation": HedgeClass(
        "incorrect",
        "an approximate value where the key is exact: «περίπου 530», 'about 888', '~530', "
        "'530 or so'; a tolerance ('± 1') states no one value",
        (
            r"περιπου",
            r"γυρω\s+σ(?:τα|τις|τους|το|τη|την)",
            r"καπου(?:\s+σ(?:τα|τις|τους|το))?",
            r"σχεδον",
            r"κατα\s+προσεγγιση",
            r"approximately",
            r"approx\.?",
            r"about",
            r"around",
            r"roughly",
            r"nearly",
            r"almost",
            r"circa",
            r"close\s+to",
            r"in\s+the\s+region\s+of",
            r"something\s+like",
            r"on\s+the\s+order\s+of",
            r"κατι\s+σαν",
            r"της\s+ταξης\s+(?:του|των|τησ)",
            r"~",
        ),
    ),
    "guess": HedgeClass(
        "incorrect",
        "the reply calls its answer a guess, or says it may be wrong or unfinished",
        (
            r"(?:best|my|a|wild|educated)\s+guess",
            r"I\s+guess",
            r"I'?d\s+guess",
            r"guessing",
            r"(?:may|might|could)\s+be\s+wrong",
            r"not\s+(?:entirely\s+|completely\s+|100%\s+)?"
            r"(?:sure|certain)",
            r"unsure",
            r"can'?t\s+be\s+(?:sure|certain)",
            r"(?:couldn'?t|could\s+not|was\s+unable\s+to|unable\s+to)\s+(?:finish|complete|"
            r"verify|solve|compute|determine|check|work)",
            r"δεν\s+ειμαι\s+(?:απολυτα\s+|εντελως\s+|100%\s+)?(?:σιγουρ|βεβαι)\w*",
            r"στην\s+τυχη",
            r"στα\s+τυφλα",
            r"μαντευ\w*",
            r"μαντεψια",
            r"εικασια",
            r"δεν\s+(?:μπορεσα|καταφερα)",
            r"ισως\s+(?:κανω|εχω)\s+λαθος",
        ),
    ),
    "probability": HedgeClass(
        "unsure",
        "the answer offered as probable, not stated: «μάλλον», «ίσως», 'probably', 'maybe'; "
        "graders part on one candidate offered as probable («Πιθανότατα Ευρυδίκη.»): some "
        "refuse it, others read a committed answer with a mild hedge",
        (
            r"probably",
            r"maybe",
            r"perhaps",
            r"possibly",
            r"(?<!un)likely",
            r"presumably",
            r"(?<!ή\s)(?<!η\s)μαλλον(?!\s+παρα)",
            r"ισως",
            r"πιθανον",
            r"πιθανως",
            r"πιθανοτατα",
            r"πιθανοτερο",
            r"κατα\s+πασα\s+πιθανοτητα",
            r"ενδεχομενως",
            r"ενδεχεται",
            r"μπορει\s+να\s+ειναι",
            r"in\s+all\s+(?:likelihood|probability)",
            r"chances\s+are",
            r"(?:might|may|could)\s+be(?!\s+wrong)",
        ),
        reach="clause",
    ),
    "belief": HedgeClass(
        "unsure",
        "a mild belief marker on an otherwise committed answer: 'I think', «νομίζω»",
        (
            r"I\s+think",
            r"I\s+believe",
            r"I'?d\s+say",
            r"I\s+suppose",
            r"I\s+suspect",
            r"in\s+my\s+opinion",
            r"νομιζω",
            r"πιστευω",
            r"μου\s+φαινεται",
            r"υποθετω",
            r"θαρρω",
            r"λογικα",
            r"κανονικα",
            r"θεωρητικα",
            r"normally",
            r"in\s+theory",
            r"in\s+principle",
        ),
        reach="clause",
    ),
    "time_bound": HedgeClass(
        "unsure",
        "a date or time given as a bound: «μετά τις 19/11», 'before 18:00'; it may be the "
        "answer the question wants («από πότε …;») or a bound beside it",
        (
            r"μετα\s+(?:απο\s+)?(?:τις|την|τη|το)(?=\s*\d{1,2}[:/.]\d)",
            r"πριν\s+(?:απο\s+)?(?:τις|την|τη|το)(?=\s*\d{1,2}[:/.]\d)",
            r"(?:after|before|not\s+before|no\s+later\s+than)(?=\s*\d{1,2}[:/.]\d)",
        ),
        reach="clause",
    ),
    "bound": HedgeClass(
        "incorrect",
        "a bound where the key is one value: «τουλάχιστον 310», 'at most 12', 'more than 40'",
        (
            r"τουλαχιστον",
            r"τουλαχιστο",
            r"το\s+πολυ",
            r"at\s+least",
            r"at\s+most",
            r"no\s+(?:more|less|fewer)\s+than",
            r"(?:more|less|fewer)\s+than(?=\s*[$€£]?\s*\d)",
            r"(?:πανω|κατω)\s+απο(?=\s*[$€£]?\s*\d)",
            r"(?:λιγοτερ|περισσοτερ)\w*\s+απο(?=\s*[$€£]?\s*\d)",
        ),
        reach="clause",
    ),
}
"""Every hedge marker, by class; `approximation` counts only next to the key's number."""

_TOLERANCE_RE = re.compile(r"±|\\pm\b|\+/-|\+-(?=\s*\d)")
_ROUNDING_RE = re.compile(
    r"\bround(?:ed|ing)?\b|to the nearest|decimal place|significant (?:figure|digit)|estimat"
    r"|approximat|about how|roughly|"
    + accent_tolerant(r"στρογγυλ|προσεγγ|εκτιμ|περιπου|δεκαδικ|πλησιεστερ"),
    re.I,
)
"""A question that asks to round or estimate wants an approximate answer (read in its ask,
after the passage's closing «»)."""
_QUOTED_RE = re.compile(r"«[^«»]*»|“[^“”]*”|\"[^\"]*\"")
_CLAUSE_RE = re.compile(r"[,;:()\[\]—–]|\s-\s|(?<=[.!?…])\s")
_REASON_RE = re.compile(
    r"^\W*(?:because|since|given\s+that|"
    + accent_tolerant(r"γιατι|επειδη|διοτι|αφου|καθως|μια\s+και")
    + r")(?![^\W_])",
    re.I,
)
_NUMBER = r"[$€£]?\s*\d"


def _word(pattern: str) -> str:
    """`pattern` as a whole word; a sign ("~") must not follow a word or a LaTeX brace
    (`50~\\text{cm}` is a space in LaTeX)."""
    if not (pattern[0].isalpha() or pattern[0] == "("):
        return rf"(?<![\w\\}}]){re.escape(pattern)}"
    return rf"(?<![^\W_])(?:{accent_tolerant(pattern)})(?![^\W_])"


@lru_cache(maxsize=8)
def _class_re(name: str) -> re.Pattern[str]:
    return re.compile("|".join(map(_word, HEDGE_MARKERS[name].markers)), re.I)


@lru_cache(maxsize=1)
def _approximation_re() -> re.Pattern[str]:
    markers = "|".join(map(_word, HEDGE_MARKERS["approximation"].markers))
    after = accent_tolerant(
        r"περιπου|or so|approximately|approx\.?|roughly|give or take|more or less"
        r"|or thereabouts|η καπου εκει"
        r"|πανω κατω|λιγο πολυ"
    )
    return re.compile(
        rf"(?:{markers})\s*(?:(?:at|to|the|τα|τις|τους|το|στα|στις|στους|στο)\s+)?(?P<a>{_NUMBER}[\d.,:/]*)"
        # «310 (περίπου)», "310, more or less": the marker in a clause of its own.
        rf"|(?P<b>\d[\d.,:/]*)\s*(?:[^\W\d_]{{1,12}}\.?\s+|[€$£%]\s*)?"
        rf"(?:(?:{after})(?![^\W_])|,\s*(?:{after})\W*(?:,|$))",
        re.I,
    )


_HINT_STEMS = (
    "περιπ", "γυρω", "καπου", "σχεδ", "προσεγγ", "σιγουρ", "βεβαι", "τυχη", "τυφλ", "μαντ",
    "εικασ", "μπορεσ", "καταφερ", "λαθο", "μαλλ", "ισω", "πιθαν", "νομιζ", "πιστευ",
    "φαινετ", "υποθετ", "θαρρ", "approx", "about", "around", "rough", "near", "almost",
    "circa", "close", "region", "something like", "order of", "κατι σαν", "ταξησ", "πανω κατω",
    "λιγο πολυ", "more or less", "thereabouts", "τουλαχιστ", "το πολυ", "at least", "at most",
    "than", "πανω απο", "κατω απο", "λιγοτερ", "περισσοτερ", "λογικα", "κανονικα", "θεωρητικα",
    "normally", "theory", "principle", "μετα", "πριν", "after", "before", "later",
    "guess", "wrong", "sure",
    "certain", "unable", "couldn",
    "could not", "probab", "maybe", "perhaps", "possib", "likely", "presum", "think",
    "believe", "say", "suppose", "suspect", "opinion",
)  # fmt: skip
_HINT_RE = re.compile(r"[~±]|\\pm|\+[-/]|" + "|".join(map(re.escape, _HINT_STEMS)))
"""Every marker has one of these; most committed answers have none (a cheap first test)."""
_UNACCENTED = str.maketrans("άέήίόύώϊϋΐΰ", "αεηιουωιυιυ")


def _hinted(text: str) -> bool:
    """Whether `text` may hold a marker: a literal search of the lower-cased, unaccented
    text, which most committed answers fail at once."""
    return _HINT_RE.search(text.casefold().translate(_UNACCENTED)) is not None


def _clauses(text: str) -> list[str]:
    """The clauses of `text`, without quotations and reason clauses."""
    text = _QUOTED_RE.sub(" ", text)
    return [c for c in _CLAUSE_RE.split(text) if c.strip() and not _REASON_RE.match(c)]


def committed_scope(ctx: Context) -> str:
    """The committed answer's sentence to the end of its line, without quotations and
    reason clauses: where an approximation, a tolerance or a guess would be."""
    return " , ".join(_clauses(ctx.extraction.context or ctx.extracted))


def answer_clauses(ctx: Context, marker: re.Pattern[str]) -> str:
    """The clauses of the committed answer's sentence that name the key, and any clause that
    holds nothing but a `marker` ("12, probably"); the whole sentence when none names it."""
    text = ctx.extraction.context or ctx.extracted
    sentence = next((part for part in split_sentences(text) if tokens(part)), text)
    clauses = _clauses(sentence)
    # The key's words as written; a form the rules found otherwise (a transliteration, an
    # inflection) is in no clause here, and then the whole sentence counts.
    answer = {word for form in ctx.key.answers for word in answer_content(form)}
    holding = [c for c in clauses if answer & set(tokens(c))]
    if not holding:
        return " , ".join(clauses)
    bare = [c for c in clauses if not content_tokens(marker.sub(" ", c))]
    return " , ".join(holding + bare)


def hedge_doubt(ctx: Context) -> Outcome | None:
    """For a credited reply: a hedge marker on its committed answer (see `HEDGE_MARKERS`)
    makes it wrong, or unsure for a mild belief marker; None when it has none."""
    if not _hinted(ctx.extraction.context or ctx.extracted):
        return None  # the common case, decided without cutting the line into clauses
    scope = committed_scope(ctx)
    task = " ".join((ctx.key.question or "", *ctx.key.answers))
    if _TOLERANCE_RE.search(scope) and not _TOLERANCE_RE.search(task):
        return vetoed(f"{scope.strip()!r} gives a tolerance, not one value", "hedged")
    if _approximates_key(ctx, scope) and not _wants_approximation(ctx):
        return vetoed(f"{scope.strip()!r} approximates the key's value", "hedged")
    for name in ("guess", "probability", "bound", "time_bound", "belief"):
        marker = _class_re(name)
        where = scope if HEDGE_MARKERS[name].reach == "line" else answer_clauses(ctx, marker)
        found = marker.search(where)
        if found is None or _in_task(found.group(0), task):
            continue
        detail = f"{found.group(0)!r} hedges the committed answer ({name})"
        if HEDGE_MARKERS[name].verdict == "unsure":
            return doubtful("hedge", detail)
        return vetoed(detail, "hedged")
    return None


def _in_task(marker: str, task: str) -> bool:
    """Whether the task itself uses the marker («η Μαρία μάλλον θα έρθει»): the reply
    repeating it reports the task's own doubt."""
    return f" {fold_text(marker)} " in f" {fold_text(task)} "


def _wants_approximation(ctx: Context) -> bool:
    """Whether the task asks for an approximate value, or gives the key's own value as one
    («Η πτήση διαρκεί περίπου 45 λεπτά»)."""
    question = ctx.key.question or ""
    if _ROUNDING_RE.search(question.rsplit("»", 1)[-1]):
        return True
    return _approximates_key(ctx, question)


def _approximates_key(ctx: Context, scope: str) -> bool:
    """Whether an approximation marker stands next to the key's own number (or any number,
    for a key that is a time of day: «γύρω στις 8» for 20:00)."""
    matches = list(_approximation_re().finditer(scope))
    if not matches:
        return False
    if key_minutes(ctx.answer) is not None:
        return True
    expected = {value for answer in ctx.key.answers for value in numbers_in(answer)}
    return any(
        set(numbers_in(match.group("a") or match.group("b") or "")) & expected for match in matches
    )
