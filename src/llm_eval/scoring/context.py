"""What every rule sees: one reply and its key with derived views cached, a rule's outcome,
and the search for the answer the reply commits to."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

from llm_eval.scoring.commitment import (
    NEGATIVE_QUESTION,
    aside_hedge,
    gloss_after_head,
    has_hedge_cue,
    head_text,
    rejects,
)
from llm_eval.scoring.extraction import (
    Extraction,
    extract_answer,
    is_courtesy,
)
from llm_eval.scoring.forms import form_of, name_token
from llm_eval.scoring.locative import before_location, locates_decoy
from llm_eval.scoring.matchers import (
    STOPWORDS,
    competing_candidate,
    conclusion_of,
    content_tokens,
    is_hedged,
    offers,
    polarity,
    tokens_equal,
)
from llm_eval.scoring.normalize import (
    tokens,
)
from llm_eval.scoring.result import AnswerKey
from llm_eval.scoring.sentences import split_sentences

Status = Literal["match", "veto", "pass", "unsure"]

_COMMENTARY_WORDS = 4


class Context:
    """One response and expected answer, with everything the rules derive from them cached."""

    def __init__(self, response: str, key: AnswerKey) -> None:
        self.response = response
        self.key = key
        self.answer = key.answer
        self.answer_regex = key.answer_regex
        self.rivals: dict[str, str | None] = {}
        """`_rival`'s findings, by the text searched."""
        self.credited_head: str | None = None
        """The committed text the key was found in, once `committed` credits it: the checks
        that follow (the form a task demands) judge that text, not the span's first words."""

    @cached_property
    def extraction(self) -> Extraction:
        return extract_answer(self.response)

    @property
    def extracted(self) -> str:
        """The extracted final answer, "" for an empty response."""
        return self.extraction.answer or ""

    @cached_property
    def span(self) -> str:
        """The span offered as the answer: the extracted answer, or the last sentence of a
        last line that is commentary (its conclusion)."""
        if not self.searches_raw:
            return self.extracted
        sentences = [s for s in split_sentences(self.extracted) if tokens(s)]
        # A closing pleasantry («Αν θέλεις, μπορώ να σου γράψω…») follows the answer.
        while len(sentences) > 1 and is_courtesy(sentences[-1]):
            sentences.pop()
        return sentences[-1] if sentences else self.extracted

    @cached_property
    def negation(self) -> bool:
        """Whether a negation in the reply rejects what it governs: not when the question
        itself asks about a negative ("Ποιος δεν έρχεται;")."""
        question = self.key.question or ""
        stem = question.rsplit("»", 1)[-1] if "»" in question else question
        return NEGATIVE_QUESTION.search(stem) is None

    @cached_property
    def head(self) -> str:
        """The committed part of the span: before its reasons and asides."""
        return head_text(self.span, self.negation) or self.span

    @cached_property
    def conclusion_head(self) -> str:
        """The head of what follows the last conclusion marker ("άρα", "so") of the span, or,
        for a first-line answer, of the reply's last sentence; "" when there is none."""
        where = self.span
        if self.extraction.rule == "first_line":
            lines = self.raw_lines
            sentences = [s for s in split_sentences(lines[-1]) if tokens(s)] if lines else []
            where = sentences[-1] if sentences else ""
        conclusion = conclusion_of(where)
        if not conclusion or conclusion == where:
            return ""
        return head_text(conclusion, self.negation)

    @cached_property
    def answer_tokens(self) -> tuple[str, ...]:
        return tokens(self.answer)

    @cached_property
    def answer_polarity(self) -> bool | None:
        """True/False when the expected answer is a yes/no word, else None."""
        folded = self.answer_tokens
        return polarity(folded[0]) if len(folded) == 1 else None

    @cached_property
    def searches_raw(self) -> bool:
        """Whether containment may look past the extracted answer (see the module docstring)."""
        extraction = self.extraction
        return extraction.rule == "last_line" and (
            extraction.question or len(content_tokens(self.extracted)) >= _COMMENTARY_WORDS
        )

    @property
    def transliterates(self) -> bool:
        """Whether Greeklish spellings may stand for Greek ones (not when Greek is demanded)."""
        return self.key.answer_script != "greek"

    @cached_property
    def raw_lines(self) -> list[str]:
        """The response's lines that contain at least one word or number."""
        return [line for line in self.extraction.text.splitlines() if tokens(line)]


class Outcome(NamedTuple):
    """What one rule concluded."""

    status: Status
    detail: str
    method: str | None = None
    """For a veto, the verdict's method when it differs from the rule's name."""
    reason: str | None = None
    """For an unsure outcome, its class (one of `unsure.UNSURE_REASONS`)."""


def matched(detail: str) -> Outcome:
    return Outcome("match", detail)


def vetoed(detail: str, method: str = "no_match") -> Outcome:
    return Outcome("veto", detail, method)


def passed(detail: str) -> Outcome:
    return Outcome("pass", detail)


def doubtful(reason: str, detail: str) -> Outcome:
    """The rules cannot settle the reply: unsure, of the class `reason`."""
    return Outcome("unsure", detail, reason, reason)


@dataclass(frozen=True, slots=True)
class Rule:
    """A named check in a scorer's chain."""

    name: str
    check: Callable[[Context], Outcome]


def search(
    ctx: Context,
    found: Callable[[str], bool],
    what: str,
    near: Callable[[str], bool] | None = None,
) -> Outcome:
    """Look for the answer in the committed answer, then (if allowed) in the response's lines.

    The committed answer is the head of the extracted span: its first clause that offers
    something, before the reasons, asides and rejected candidates that follow it. A hit
    inside a segment that hedges on it (`near` tells which words are the answer) vetoes with
    method `hedged`, and so does an aside offering another candidate ("(ή ίσως Τετάρτη)");
    a hit beside one of the task's distractors in the head vetoes with method `distractor`.
    """
    if ctx.extracted and found(ctx.extracted):
        if is_hedged(ctx.extracted, near=near) and not appositive(ctx, ctx.extracted):
            if unclear_apposition(ctx, ctx.extracted):
                return doubtful(
                    "several_candidates", f"{ctx.extracted!r} may describe the key or name another"
                )
            return vetoed(f"{what} in a hedged answer {ctx.extracted!r}", "hedged")
        return committed(ctx, found, what)
    conclusion = ctx.conclusion_head
    if ctx.extraction.rule == "first_line" and conclusion and found(conclusion):
        # «Το Παγκράτι απορρίπτεται (…). Άρα … στου Ζωγράφου.»: the first line gave a reason,
        # the conclusion commits. A first line that is a bare decoy («Νέα Φιλαδέλφεια.»)
        # is the answer, whatever its explanation goes on to say.
        rival = rival_of(ctx, ctx.head)
        bare = rival is not None and set(content_tokens(ctx.head)) <= set(content_tokens(rival))
        if not bare:
            return committed(ctx, found, what)
    if not ctx.searches_raw:
        return passed(f"no {what} in the extracted answer {ctx.extracted!r}")
    hits = [line for line in ctx.raw_lines if found(line)]
    hedged = next(
        (line for line in hits if is_hedged(line, near=near) and not appositive(ctx, line)),
        None,
    )
    if hedged is not None:
        return vetoed(f"{what} in a hedged line {hedged.strip()!r}", "hedged")
    if hits:
        rival = rival_of(ctx, ctx.extraction.text)
        if rival is not None:
            return vetoed(f"the response also offers the decoy {rival!r}", "distractor")
        return matched(f"{what} in the response line {hits[0].strip()!r}")
    return passed(f"no {what} in the extracted answer or the response")


_APPOSITION_RE = re.compile(r"\s*,\s*")
_DESCRIPTION_WORDS = 2
_ARTICLES = frozenset({"ο", "η", "το", "οι", "τα", "the", "a", "an"})
"""Content words a role noun or description in an apposition may have («ο ντράμερ»)."""


def appositive(ctx: Context, text: str) -> bool:
    """Whether a comma list names one thing twice, an apposition rather than a choice.

    Class `appositive`: every item is one of the key's forms or a part of its name («Ο
    Γιώργος, ο Παππάς»), or one item is the key and the other only describes it: a role noun
    that names no one of the task («Η ξαδέρφη, η Ελπίδα») when the key is a name, or the
    question's own subject restated («Η Ευτέρπη, φρούτα» for «Τι θα φέρει η Ευτέρπη;»).
    An item that names a decoy or another name is a second candidate, never an apposition.
    """
    return _apposition(ctx, text) == "yes"


def unclear_apposition(ctx: Context, text: str) -> bool:
    """Class `several_candidates`: the key beside one capitalised word that opens the reply
    («Ξαδέρφη, η Ελπίδα»), which the task names nowhere: a role noun written with a
    capital, or another name; the rules cannot tell which."""
    return _apposition(ctx, text) == "unclear"


Apposition = Literal["yes", "no", "unclear"]


def _apposition(ctx: Context, text: str) -> Apposition:
    items = [item for item in _APPOSITION_RE.split(text.strip(" .;!")) if tokens(item)]
    if len(items) < 2 or any(" ή " in f" {item} " or " or " in f" {item} " for item in items):
        return "no"
    keyed = [_names_key(ctx, item) for item in items]
    if all(keyed):
        return "yes"
    if len(items) != 2 or not any(keyed):
        return "no"
    other = items[keyed.index(False)]
    verdict = _describes(ctx, other, first=keyed[0] is False)
    if verdict == "unclear" and tokens(items[1])[0] not in _ARTICLES:
        return "no"  # two bare words («Μαρία, Μαρίνα») are a list, not a role and a name
    return verdict


_GENITIVE_DESCRIPTION_RE = re.compile(
    r"(?:(?:ο|η|το|the) )?[^\W\d_]+ (?:του|τησ|των|of) (?:(?:κ|κυρ[^\W\d_]*|mrs?|ms) )?"
    r"[^\W\d_]+"
)


def genitive_description(ctx: Context, text: str) -> bool:
    """Whether `text` is the key beside a description in the genitive («Η μαμά της
    Ιλέκτρας, η κυρία Τασούλα», "Ilektra's mother, Mrs Tasoula"): a decoy named there may
    describe the key (its owner, a role) or be a second candidate; the rules cannot tell."""
    items = [item for item in _APPOSITION_RE.split(text.strip(" .;!")) if tokens(item)]
    if len(items) != 2:
        return False
    keyed = [_names_key(ctx, item) for item in items]
    if keyed.count(True) != 1:
        return False
    other = items[keyed.index(False)]
    return _GENITIVE_DESCRIPTION_RE.fullmatch(" ".join(tokens(other))) is not None


def _names_key(ctx: Context, item: str) -> bool:
    """Whether `item` is one of the key's forms, or a part of a key of several words."""
    if any(
        offers(tokens(answer), item, transliterate=ctx.transliterates) for answer in ctx.key.answers
    ):
        return True
    words = content_tokens(item)
    parts = {word for answer in ctx.key.answers for word in content_tokens(answer)}
    return bool(words) and set(words) <= parts


def _describes(ctx: Context, item: str, *, first: bool) -> Apposition:
    """Whether `item` only describes the key: no decoy, no number, a few words, and either a
    role noun (lower case, named nowhere in the task as a name) beside a key that is a name,
    or words all taken from the question's own ask; "unclear" when its only capital is the
    reply's first letter."""
    words = content_tokens(item)
    if not words or len(words) > _DESCRIPTION_WORDS or any(c.isdigit() for c in item):
        return "no"
    decoys = {word for distractor in ctx.key.distractors for word in content_tokens(distractor)}
    if decoys & set(words) or rival_of(ctx, item) is not None:
        return "no"
    question = ctx.key.question or ""
    if set(words) <= set(tokens(question.rsplit("»", 1)[-1])):
        return "yes"  # the question's own subject, restated beside the answer
    if not all(w[0].isupper() for w in re.findall(r"[^\W\d_]+", ctx.answer)):
        return "no"  # beside an open answer, another word is another candidate
    if set(words) & capitalised_words(question):
        return "no"  # a name of the task
    # An article that opens the reply is capitalised as a sentence start («Η ξαδέρφη»); a
    # bare capitalised word there («Ξαδέρφη, η Ελπίδα») may be a role noun or a name.
    written = re.findall(r"[^\W\d_]+", item)
    opens_with_article = first and len(written) > 1 and tokens(written[0])[0] in _ARTICLES
    if set(words) & capitalised_words(" ".join(written[1:] if opens_with_article else written)):
        return "unclear" if first and not opens_with_article and len(written) == 1 else "no"
    return "yes"


def committed(ctx: Context, look: Callable[[str], bool], what: str) -> Outcome:
    """Judge the answer the reply commits to: the head of its conclusion, else of its span."""
    seen: dict[str, bool] = {}

    def found(text: str) -> bool:  # the head is often the whole span: look once
        if text not in seen:
            seen[text] = look(text)
        return seen[text]

    conclusion, head = ctx.conclusion_head, ctx.head
    if ctx.extraction.rule == "first_line" and conclusion and found(head):
        if not found(conclusion) and (rival := rival_of(ctx, conclusion)) is not None:
            return vetoed(f"the reply concludes {conclusion!r}, naming {rival!r}", "distractor")
        conclusion = ""  # the first line is the answer; the conclusion only agrees with it
    if conclusion and found(conclusion):
        head = conclusion
        ctx.credited_head = conclusion
    elif conclusion and (rival := rival_of(ctx, conclusion) or decoy_form_in(ctx, conclusion)):
        return vetoed(f"the conclusion {conclusion!r} offers the decoy {rival!r}", "distractor")
    elif not found(head):
        gloss = gloss_after_head(ctx.span, head)
        if gloss is None or not found(gloss) or rival_of(ctx, head) is not None:
            return passed(f"{what} only in the reasons of {ctx.span!r}, not in {head!r}")
        return matched(f"{what} in {gloss!r}, a gloss of the committed answer {head!r}")
    if rejects(ctx.span, head, ctx.answer_tokens, ctx.negation):
        return vetoed(f"the committed answer {head!r} rejects {ctx.answer!r}", "negated")
    located = locates_decoy(
        head, ctx.key.answers, ctx.key.distractors, transliterate=ctx.transliterates
    )
    if located is not None:
        return vetoed(f"{head!r} names the key only to locate the decoy {located!r}", "distractor")
    rival = rival_in_commitment(ctx, head)
    if rival is not None and genitive_description(ctx, head):
        return doubtful(
            "several_candidates",
            f"{head!r} names the key beside a description that names the decoy {rival!r}",
        )
    if rival is not None and prose_naming_both(ctx, head):
        return doubtful(
            "several_candidates",
            f"the sentence {head!r} names the key and the decoy {rival!r}; the rules cannot"
            " tell which it commits to",
        )
    if rival is not None:
        return vetoed(
            f"the committed answer {head!r} also offers the decoy {rival!r}", "distractor"
        )
    other = aside_candidate(ctx, ctx.span, head) if ctx.span.strip() != head else None
    if other is not None:
        return vetoed(f"an aside of {ctx.span!r} offers {other!r} as another answer", "hedged")
    return matched(f"{what} in the committed answer {head!r}")


_CONDITION_CUE_RE = re.compile(
    r"(?<![^\W_])(?:αν|εάν|εαν|ειδάλλως|ειδαλλως|αλλιώς|αλλιως|if|unless|otherwise)(?![^\W_])",
    re.I,
)
_PROSE_WORDS = 3
"""Words besides the candidates that make a committed answer a sentence, not a list."""


def prose_naming_both(ctx: Context, head: str) -> bool:
    """Class `several_candidates`: a committed sentence that names the key and a decoy with
    no hedge cue between them («Η Δήμητρα παίρνει το ψυγειάκι και το γκαζάκι το φέρνει ο
    Άκης»). Who does what is in its grammar, which the rules do not parse; a bare list of
    candidates («Άκης, Δήμητρα») is no sentence and stays a hedge."""
    if has_hedge_cue(head) or _CONDITION_CUE_RE.search(head):
        return False  # «Αν τελειώσει νωρίς η Κική, ειδάλλως ο Στάθης»: one answer per condition
    candidates = {
        word
        for answer in (*ctx.key.answers, *ctx.key.distractors)
        for word in content_tokens(answer)
    }
    others = [word for word in content_tokens(head) if word not in candidates]
    return len(others) >= _PROSE_WORDS


def aside_candidate(ctx: Context, span: str, head: str) -> str | None:
    """Another candidate a hedge cue offers outside the head ("Mia (possibly Kate)")."""
    if not has_hedge_cue(span):
        return None
    decoys = {word for distractor in ctx.key.distractors for word in content_tokens(distractor)}
    answer = set(ctx.answer_tokens)
    names = frozenset() if decoys else capitalised_words(span)

    def is_candidate(word: str) -> bool:
        if word in answer or word in STOPWORDS:
            return False
        # With no decoys listed, a name a hedge cue offers competes ("possibly Kate").
        return word in decoys if decoys else word in names

    return aside_hedge(span, head, is_candidate)


def capitalised_words(text: str) -> frozenset[str]:
    """The folded tokens of the words `text` writes with a capital letter."""
    return frozenset(
        token for word in re.findall(r"[^\W\d_]+", text) if word[0].isupper()
        for token in tokens(word)
    )  # fmt: skip


def rival_of(ctx: Context, text: str) -> str | None:
    """A distractor of the task that `text` offers beside the answer (once per text: the
    committed answer is often asked about by several rules)."""
    if not ctx.key.distractors:
        return None
    if text not in ctx.rivals:
        ctx.rivals[text] = competing_candidate(
            text, ctx.key.answers, ctx.key.distractors, transliterate=ctx.transliterates
        )
    return ctx.rivals[text]


def decoy_form_in(ctx: Context, text: str) -> str | None:
    """A one-word name decoy that `text` names in another case («πάνε Σχινιά» for the decoy
    «Σχινιάς»): the decoy list holds the nominative, a reply declines it."""
    words = tokens(text)
    for distractor in ctx.key.distractors:
        name = name_token(distractor)
        if name is not None and any(form_of(word, frozenset({name})) for word in words):
            return distractor
    return None


def rival_in_commitment(ctx: Context, text: str) -> str | None:
    """A decoy the committed `text` offers beside the key, leaving out what a locative word
    after the key describes («απέναντι από το καφέ» only says where the key is)."""
    where = before_location(
        text, ctx.key.answers, ctx.key.distractors, transliterate=ctx.transliterates
    )
    return rival_of(ctx, where)


def near_answer(ctx: Context, *, transliterate: bool) -> Callable[[str], bool]:
    """Whether a word is one of the expected answer's words (for the hedging check)."""
    return lambda word: any(
        tokens_equal(word, part, transliterate=transliterate) for part in ctx.answer_tokens
    )
