"""When the rules cannot settle a reply: the classes of unsure verdicts, and how each is told.

A sure verdict must be right, so a reply the rules cannot read is `unsure` with one of
`UNSURE_REASONS`, and a person (or an optional judge) settles it. The rules stay sure where
they can be: a committed decoy, a number, date or name that is not the key, a hedge between
candidates, a range, several answer lines are wrong whatever else the reply says.
"""

from __future__ import annotations

import re

from llm_eval.scoring.context import Context, Outcome, doubtful, passed, rival_of, vetoed
from llm_eval.scoring.cues import conditions
from llm_eval.scoring.forms import declined, form_of, governed, name_forms, name_token
from llm_eval.scoring.matchers import (
    NEGATORS,
    answer_content,
    answer_date,
    answer_number,
    content_tokens,
    dates_in,
    is_hedged,
    numbers_in,
    offers,
)
from llm_eval.scoring.normalize import has_greek, has_latin, plain, token_value, tokens

UNSURE_REASONS: dict[str, str] = {
    "self_correction": "the reply may change its answer («…, ή μάλλον X», 'or rather X')",
    "conditional": "the key is committed, with another answer under a condition («αλλά αν…»)",
    "other_language": "the answer is in another language or script than the key",
    "unlisted_form": "a form of the key that is also a form of a decoy («του Χάρη»)",
    "expression": "the answer is an expression the rules cannot evaluate",
    "paraphrase": "an open answer (a meaning, a description) in words the key does not use",
    "several_candidates": "the key beside a word that may describe it or name another one",
    "form_demand": "the task demands a form («ΗΗ/ΜΜ», «χωρίς άρθρο») the answer may not meet",
    "hedge": "the key under a mild belief marker ('I think', «νομίζω»): see `HEDGE_MARKERS`",
}
"""Every reason an unsure verdict may give, with what it means (shown by `--explain`)."""

_MEANING_RE = re.compile(
    r"σημαίνει|σημαινει|εννοεί|εννοει|\bmeans?\b|\bmeaning\b|περιγράψ|describe", re.I
)
_OPEN_MIN_WORDS = 2
_NON_ANSWER_RE = re.compile(
    r"δεν είμαι σίγουρ|δεν ειμαι σιγουρ|δεν ξέρω|δεν ξερω|δεν μπορώ να (?:ξέρω|πω|απαντήσω)"
    r"|\bnot sure\b|\bI don'?t know\b|\bcannot (?:tell|determine|say)\b|\bunknown\b",
    re.I,
)
"""A reply that says it does not know answers nothing: surely wrong, never unsure."""
_LONGEST_WORD = 24
_OBLIQUE_ENDINGS = ("ου", "ε")
"""Endings of a name's genitive or vocative, which a reply writes alone only by a slip."""
_CLAUSE_RE = re.compile(r"[,;·]")


def open_answer(ctx: Context) -> bool:
    """Whether the key is an open answer: a phrase, a meaning or a description, which a right
    reply may put in other words (not a name, a number or a date)."""
    answer = ctx.answer
    if any(c.isdigit() for c in answer) or answer_number(answer) is not None:
        return False
    if answer_date(answer) is not None or ctx.answer_polarity is not None:
        return False
    words = re.findall(r"[^\W\d_]+", answer)
    if words and all(word[0].isupper() for word in words):
        return False  # a name, perhaps of several words
    asks_meaning = _MEANING_RE.search(ctx.key.question or "") is not None
    return asks_meaning or len(answer_content(answer)) >= _OPEN_MIN_WORDS


def _script(text: str) -> str:
    if has_greek(text):
        return "latin+greek" if has_latin(text) else "greek"
    if has_latin(text):
        return "latin"
    return "other" if re.search(r"[^\W\d_]", text) else "none"


def _has_words(text: str) -> bool:
    """Whether `text` has a word in some language: stray letters or a run of one letter are
    none ("v3", "A4")."""
    words = re.findall(r"[^\W\d_]+", text)
    return any(3 <= len(word) <= _LONGEST_WORD and len(set(word)) > 1 for word in words)


def _key_script(ctx: Context) -> str:
    """The script of the key's language: of the key as written, or, when it has letters but
    no words («v3»), of its first accepted form in words («έκδοση 3»). A key of digits
    alone («530») has no language, whatever words its accepted forms add («530 ευρώ»)."""
    script = _script(ctx.answer)
    if script == "none" or _has_words(ctx.answer):
        return script
    worded = next((answer for answer in ctx.key.accepted if _has_words(answer)), ctx.answer)
    return _script(worded)


def other_language(ctx: Context) -> bool:
    """Whether the committed answer is written in another script than the key's language."""
    if not _has_words(ctx.head):
        return False
    key, head = _key_script(ctx), _script(ctx.head)
    return key in ("greek", "latin") and head not in (key, "none", "latin+greek")


_CONTRAST_RE = re.compile(
    r"(?<![^\W_])(?:αλλά|αλλα|όμως|ομως|ωστόσο|ωστοσο|but|however)(?![^\W_])", re.I
)


_CONDITION_RE = re.compile(r"(?<![^\W_])(?:αν|εάν|εαν|if|unless)(?![^\W_])", re.I)


def _key_after_head(ctx: Context) -> bool:
    """Whether the span goes on past its head, after a contrast, to name the key («Ο Φάνης
    έχει το κλειδί, αλλά λείπει· θα το φέρει η Ντίνα»): the head may be a reason."""
    rest = ctx.span[len(ctx.head) :] if ctx.span.startswith(ctx.head) else ""
    if _CONTRAST_RE.search(rest) is None:
        return False  # an aside «(το νερό θα είναι κανονικά)» or a range «19/05–20/05»
    if _CONDITION_RE.search(rest) is not None:
        return False  # «Πάτρα, αλλά αν εννοείς τις διακοπές, Βόλο»: a conditional hedge
    return any(
        offers(tokens(answer), rest, transliterate=ctx.transliterates) for answer in ctx.key.answers
    )


def undecided(ctx: Context) -> Outcome:
    """The verdict when no rule found the key: sure wrong, or unsure with its class."""
    head = ctx.head
    rival = _committed_decoy(ctx, head)
    if rival is not None and _key_after_head(ctx):
        return doubtful(
            "several_candidates",
            f"{head!r} names the decoy {rival!r}, and the rest of {ctx.span!r} names the key",
        )
    if rival is not None:
        return vetoed(f"the committed answer {head!r} is the decoy {rival!r}", "decoy")
    if _NON_ANSWER_RE.search(head):
        return vetoed(f"{head!r} says the reply does not know", "no_answer")
    if ctx.key.answer_script == "greek" and other_language(ctx):
        return vetoed(f"the task demands Greek script; {head!r} is not Greek", "wrong_script")
    if other_language(ctx):
        # "version 1" for «έκδοση 2»: the words may be another language, the number is wrong.
        given = set(numbers_in(head))
        expected = {value for answer in ctx.key.answers for value in numbers_in(answer)}
        if given and expected and not given & expected:
            return vetoed(f"{head!r} states another number than {ctx.answer!r}")
        return doubtful("other_language", f"{head!r} is not in the script of {ctx.answer!r}")
    if ctx.answer_polarity is not None and _statement(head):
        return doubtful("paraphrase", f"{head!r} answers yes or no without saying either")
    stated = _stated_value(ctx, head)
    if stated is not None:
        return vetoed(f"the committed answer states {stated}, which is not the key")
    if open_answer(ctx) and content_tokens(head):
        return doubtful(
            "paraphrase", f"{head!r} may put the open answer {ctx.answer!r} in other words"
        )
    if _key_elsewhere(ctx):
        # «Από το κατάστημα στην πόλη (Λ. Ικάρου 48). Ο κ. Δημάκης ενημέρωσε…»: the answer in
        # a sentence the rules did not take for the committed one, with no decoy committed.
        return doubtful(
            "several_candidates", f"the reply names {ctx.answer!r} outside its answer {head!r}"
        )
    return passed(f"no rule found {ctx.answer!r} in {head!r}")


def _key_elsewhere(ctx: Context) -> bool:
    """Whether the reply's last paragraph names the key (any accepted form) outside the span."""
    # The last paragraph only (working before it names every candidate it weighs), plain word
    # equality, and a set of its words looked up first: this runs on every reply no rule
    # credited.
    text = ctx.extraction.text.rstrip().rsplit("\n\n", 1)[-1]
    words = {plain(word) for word in tokens(text)}
    for answer in ctx.key.answers:
        needle = tokens(answer)
        if not content_tokens(answer) or not needle:
            continue
        if token_value(needle[0]) is None and plain(needle[0]) not in words:
            continue
        if offers(needle, text, transliterate=False):
            return True
    return False


def _statement(text: str) -> bool:
    """Whether `text` says something in words («Δεν επιτρέπεται»), not a bare value."""
    return sum(1 for word in tokens(text) if not word.isdigit()) >= _OPEN_MIN_WORDS


def _committed_decoy(ctx: Context, head: str) -> str | None:
    """A decoy the committed answer names (as written, or as a form of a decoy's name)."""
    for distractor in ctx.key.distractors:
        if offers(tokens(distractor), head, transliterate=ctx.transliterates):
            return distractor
        name = name_token(distractor)
        if name is not None and any(form_of(word, frozenset({name})) for word in tokens(head)):
            return distractor
    return rival_of(ctx, head)


def _stated_value(ctx: Context, head: str) -> str | None:
    """A number or date the committed answer states where the key is not one of them."""
    if open_answer(ctx) and not (numbers_in(head) or dates_in(head)):
        return None
    if dates_in(head) and answer_date(ctx.answer) is not None:
        return "another date"
    if numbers_in(head) and answer_number(ctx.answer) is not None:
        return "another number"
    return None


def name_form_outcome(ctx: Context) -> Outcome:
    """A declined form of the key's name («του Μαρίνου» for «Μαρίνος») is the key, unless it
    is also a form of a decoy's name, or the committed answer names a decoy too."""
    names = frozenset(
        token
        for answer in ctx.key.answers
        if declined(answer) and (token := name_token(answer)) is not None
    )
    if not names:
        return passed("the key is not a one-word name that is declined")
    # The key as written was judged by the other rules; only its other forms are new here,
    # and only in a clause no negation governs («Δεν είναι του Μαρίνου»).
    clauses = [part for part in _CLAUSE_RE.split(ctx.head) if not NEGATORS & set(tokens(part))]
    found = [
        (word, governed(words, index))
        for words in map(tokens, clauses)
        for index, word in enumerate(words)
        if word not in names and form_of(word, names)
    ]
    if not found:
        return passed(f"no form of {sorted(names)} in {ctx.head!r}")
    hits = [word for word, _ in found]
    context = tokens(ctx.extraction.context)
    in_context = any(governed(context, index) for index, word in enumerate(context) if word in hits)
    alone = all(word.endswith(_OBLIQUE_ENDINGS) for word in hits)
    if alone and not in_context and not any(in_phrase for _, in_phrase in found):
        # A bare «Λονδίνου» is no phrase that asks for that case: it may be a slip.
        return doubtful("unlisted_form", f"{hits[0]!r} is another case of the key, on its own")
    decoys = frozenset(token for d in ctx.key.distractors if (token := name_token(d)) is not None)
    shared = [word for word in hits if any(word in name_forms(decoy) for decoy in decoys)]
    if shared:
        return doubtful(
            "unlisted_form", f"{shared[0]!r} is a form of the key's name and of a decoy's name"
        )
    # The first clause that names the key's form is the answer; a decoy after it is a reason
    # («Είναι του Μαρίνου, το δάνεισε στη Δανάη»).
    clause = next(
        part for part in _CLAUSE_RE.split(ctx.head) if any(map(hits.__contains__, tokens(part)))
    )
    if _committed_decoy(ctx, clause) is not None:
        return passed("the committed answer also names a decoy")
    if conditions(ctx.head):
        return passed("a condition governs the name")
    if is_hedged(ctx.extracted):
        return vetoed(f"{ctx.extracted!r} offers the name among other candidates", "hedged")
    return Outcome("match", f"{hits[0]!r} is a form of the name {sorted(names)[0]!r}")
