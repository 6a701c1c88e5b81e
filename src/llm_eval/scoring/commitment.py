"""What a reply commits to as its answer, apart from the reasons it gives for it.

A reply that explains itself names other candidates: the day that was changed, the amounts a
total is made of, the person who is *not* coming. Those are reasons, not answers, and must not
veto the answer. This module
- splits an answer span into clauses and finds its *head*: the first clause that offers
  something (a clause that only rejects, "όχι την Τρίτη", is passed over) before the asides
  (parentheses, dashes, semicolons, a new sentence, a reason or contrast clause);
- tells which words a clause sets aside: what a negation governs ("δεν πάει στη Λάρισα"),
  the old value of a change ("μεταφέρθηκε από την Τρίτη"), what was only the first plan
  ("αρχικά", "initially");
- finds a short first line or sentence offered as the answer before its explanation;
- recognises a hedge in the asides ("412 (or possibly 413)", "Mia (possibly Kate)").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from llm_eval.scoring import matchers
from llm_eval.scoring.normalize import accent_tolerant, fold, token_value, tokens, word_value
from llm_eval.scoring.sentences import sentence_end, split_sentences

# Where an aside starts: a bracket, a dash between words, a semicolon or Greek ano teleia,
# or a comma before a reason or contrast word. A new sentence starts one too (see
# `split_clauses`). Commas and full stops inside numbers ("12,10", "1.200") do not.
_REASON_WORDS = (
    "γιατι επειδη αφου καθωσ διοτι οχι ουτε αλλα ενω αντι οπωσ που οποιοσ οποια οποιο "
    "αν μετα πριν ομωσ μα εκτοσ αρχικα since because as not but while whereas instead "
    "rather which who unlike after before although though except originally initially "
    "previously nor"
)
_REASON_WORD_SET = frozenset(_REASON_WORDS.split())
_BREAK_RE = re.compile(
    r"\s*[()\[\]]\s*"  # brackets
    r"|\s+[-—–]+\s+|\s*[—–]+\s*"  # a dash between words
    r"|\s*[;·\u0387]\s*"  # semicolon, ano teleia
    r"|\n+"
)
_COMMA_RE = re.compile(r"(?<!\d),|,(?!\d)")
# A reason conjunction starts a reason clause even with no comma before it («Πάρνηθα γιατί
# η Πεντέλη είχε πυρκαγιά»): what follows explains the answer, it does not offer another.
_REASON_START_RE = re.compile(
    r"(?<=[^\W_])\s+(?=(?:"
    + accent_tolerant("γιατι|επειδη|διοτι").replace("σ", "[σς]")
    + r"|because|since)(?![^\W_]))",
    re.I,
)
# Words that set aside what follows them in their clause: the matchers' negators and
# rejecting words, and a few more forms of "not".
NEGATORS = (
    matchers.NEGATORS
    | matchers.REJECTORS
    | {"ohi", "nor", "neither", "wasnt", "doesnt", "dont", "didnt", "wont", "arent", "cannot",
       "rather"}
)  # fmt: skip
# A clause about the first plan or the old value describes what no longer holds.
_SUPERSEDED = frozenset(
    {"αρχικα", "αρχικη", "αρχικο", "αρχικοσ", "αρχικεσ", "αρχικων", "initially",
     "originally", "previously", "earlier", "formerly", "prin", "arxika", "προηγουμενο",
     "προηγουμενη", "παλια", "παλιο", "old", "original", "ακυρωθηκε", "ακυρωνεται",
     "cancelled", "canceled"}
)  # fmt: skip
# After a verb of change, "από X" / "from X" names the old value: X is set aside.
_CHANGE_STEMS = (
    "μεταφερ", "μετατεθ", "μεταθε", "αλλαξ", "αλλαζ", "αλλαγ", "μετακινη", "αναβλη",
    "metafer", "allax", "moved", "move", "chang", "switch", "resched", "postpon",
    "shifted", "πηγε", "περασ", "πεφτει", "εpεσε", "επεσε", "μειωθ", "κατεβ", "ανεβ",
    "dropped", "drops", "reduced", "went", "lowered", "raised",
)  # fmt: skip
_FROM = frozenset({"απο", "apo", "from"})
_TO = frozenset({"σε", "στο", "στη", "στην", "στον", "στα", "στισ", "στουσ", "to", "into",
                 "se", "sto", "sti", "stin", "ston", "για", "gia", "for"})  # fmt: skip
# Words that open a hedge when an aside offers another candidate after them.
HEDGE_CUES = frozenset(
    {"or", "eite", "either", "ειτε", "possibly", "maybe", "perhaps", "probably",
     "ισωσ", "μπορει", "μπορουσε", "πιθανον", "πιθανωσ", "πιθανα", "isos", "mporei",
     "could", "might", "may", "alternatively",
     "εναλλακτικα", "otherwise", "αλλιωσ"}
)  # fmt: skip
# "or" and "ή" are plain disjunctions; the others hedge only together with a candidate.
_DISJUNCTIONS = frozenset({"or", "ειτε", "either", "eite"})
_PREAMBLE = frozenset(
    {"ασ", "let", "lets", "sure", "okay", "ok", "βεβαιωσ", "φυσικα", "ενταξει", "well", "so",
     "first", "step", "βημα", "here", "εδω", "αναλυση", "analysis",
     "solution", "λυση", "σκεψη", "thinking", "given", "we", "to", "γεια", "hi", "hello",
     "καλη", "καλησπερα", "καλημερα", "hey", "note", "σημειωση", "συμφωνα", "according", "based"}
)  # fmt: skip
_SHORT_ANSWER_TOKENS = 4
_HAS_WORD_RE = re.compile(r"[^\W_]")
_WORKING_SIGNS = ("=", "+", "×", "÷", "→", "⇒", "≈", "\\")


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of an answer span: its text, its tokens and which of them it sets aside."""

    text: str
    words: tuple[str, ...]
    aside: frozenset[int]
    """Positions (in `words`) of words the clause rejects, changes from or supersedes."""

    @property
    def offered(self) -> tuple[str, ...]:
        """The clause's words that it does not set aside."""
        return tuple(w for i, w in enumerate(self.words) if i not in self.aside)


def _segments(span: str) -> list[str]:
    """`span` cut at brackets, dashes, semicolons and sentence ends, then at reason commas."""
    pieces: list[str] = []
    parts = [
        clause
        for part in _BREAK_RE.split(span)
        if part
        for sentence in split_sentences(part)
        for clause in _REASON_START_RE.split(sentence)
    ]
    for part in parts:
        if not part or not part.strip():
            continue
        start = 0
        for comma in _COMMA_RE.finditer(part):
            following = tokens(part[comma.end() : comma.end() + 40])
            if following and following[0] in _REASON_WORD_SET:
                pieces.append(part[start : comma.start()])
                start = comma.end()
        pieces.append(part[start:])
    return [piece for piece in pieces if tokens(piece)]


@lru_cache(maxsize=16384)
def split_clauses(span: str, negation: bool = True) -> tuple[Clause, ...]:
    """The clauses of `span`, each with the words it sets aside.

    `negation=False` when the question itself is negative ("Ποιος δεν έρχεται;"): then
    "δεν έρχεται ο Νίκος" names the answer rather than rejecting it.
    """
    return tuple(_clause(piece, negation) for piece in _segments(span))


def _clause(text: str, negation: bool) -> Clause:
    """A clause; what a negation sets aside ends at the next comma ("δεν είναι Τετάρτη,
    είναι Τρίτη" rejects Τετάρτη only)."""
    words: list[str] = []
    aside: set[int] = set()
    for part in _COMMA_RE.split(text):
        part_words = tokens(part)
        aside.update(len(words) + i for i in set_aside(part_words, negation))
        words.extend(part_words)
    if tuple(words) != tokens(text):  # a comma inside a token: read the clause whole
        whole = tokens(text)
        return Clause(text, whole, frozenset(set_aside(whole, negation)))
    return Clause(text, tuple(words), frozenset(aside))


def set_aside(words: Sequence[str], negation: bool = True) -> set[int]:
    """Positions of the words a clause rejects: after a negation (unless `negation` is off),
    the old value of a change, and every word of a clause about the first plan."""
    if any(word in _SUPERSEDED for word in words):
        return set(range(len(words)))
    aside: set[int] = set()
    negated = changed = in_from = False
    for index, word in enumerate(words):
        if word in NEGATORS:
            negated = negation
            continue
        if word.startswith(_CHANGE_STEMS):
            changed = True
        if changed and word in _FROM:
            in_from = True
            continue
        if in_from and word in _TO:
            in_from = False
        if negated or in_from:
            aside.add(index)
    return aside


def head_clause(span: str, negation: bool = True) -> Clause | None:
    """The clause of `span` that commits: the last one that says "finally" ("τελικά"), or
    else the first that offers a word it does not set aside."""
    clauses = split_clauses(span, negation)
    offering = [c for c in clauses if any(w not in _FILLER for w in c.offered)]
    final = [c for c in offering if _FINALLY & set(c.words)]
    if final:
        return final[-1]
    return offering[0] if offering else None


_FINALLY = frozenset({"τελικα", "finally", "eventually", "telika", "ultimately"})


def gloss_after_head(span: str, head: str) -> str | None:
    """The aside right after the head when it is a short gloss ("on the bus (λεωφορείο)")."""
    clauses = split_clauses(span)
    texts = [clause.text.strip() for clause in clauses]
    if head.strip() not in texts:
        return None
    index = texts.index(head.strip())
    if index + 1 >= len(clauses):
        return None
    gloss = clauses[index + 1]
    if gloss.aside or len(gloss.words) > _SHORT_ANSWER_TOKENS:
        return None
    return gloss.text


_FILLER = frozenset(
    {"απαντηση", "answer", "τελικα", "τελικη", "final", "λοιπον", "ειναι", "is", "the", "η",
     "ο", "το", "οι", "τα", "την", "τον", "a", "an", "it", "its"}
)  # fmt: skip


@lru_cache(maxsize=16384)
def head_text(span: str, negation: bool = True) -> str:
    """The text of the head clause of `span` ("" when no clause offers anything)."""
    head = head_clause(span, negation)
    return head.text.strip() if head is not None else ""


def rejects(span: str, head: str, needle: Sequence[str], negation: bool = True) -> bool:
    """Whether the head clause of `span` names `needle` only where it sets it aside
    ("Δεν πάει στη Λάρισα" rejects Λάρισα)."""
    clause = next((c for c in split_clauses(span, negation) if c.text.strip() == head), None)
    if clause is None or not needle:
        return False
    starts = [i for i, w in enumerate(clause.words) if w == needle[0]]
    return bool(starts) and all(i in clause.aside for i in starts)


NEGATIVE_QUESTION = re.compile(r"(?<![^\W_])(?:δεν|δε|μην|μη|not|όχι|οχι)(?![^\W_])", re.I)


def aside_hedge(span: str, head: str, is_candidate: object) -> str | None:
    """A hedge outside the head: a cue ("or", "possibly", "ίσως") followed closely by another
    candidate. `is_candidate(word)` says which words count; returns the word, or None."""
    assert callable(is_candidate)
    head_words = set(tokens(head))
    for clause in split_clauses(span):
        if clause.text.strip() == head.strip():
            continue
        words = _disjunction_words(clause.text)
        for index, word in enumerate(words):
            if word not in HEDGE_CUES:
                continue
            # A plain "or" hedges only at the start of an aside ("(or 413)"): inside a
            # reason ("ήταν στο γραφείο ή στο σπίτι") it is part of the reason.
            if word in _DISJUNCTIONS and index > 1:
                continue
            # The next few words that can carry an answer ("θα μπορούσε να είναι και η Χ").
            followers = [w for w in words[index + 1 : index + 8] if w not in _FILLER_AFTER_CUE]
            for follower in followers[:3]:
                if follower not in head_words and is_candidate(follower):
                    return follower
    return None


_FILLER_AFTER_CUE = frozenset(
    {"να", "ειναι", "και", "κι", "η", "ο", "το", "οι", "τα", "την", "τον", "τη", "στο", "στη",
     "στην", "στον", "be", "it", "is", "the", "a", "an", "also", "even", "was", "have",
     "been", "ηταν", "θα", "na", "kai", "einai", "i", "o", "to"}
)  # fmt: skip


def _any_accent(word: str) -> str:
    """A pattern for a folded cue (letters only), with or without accents and final sigma."""
    return accent_tolerant(word).replace("σ", "[σς]")


_CUE_RE = re.compile(
    "|".join(rf"(?<![^\W_]){_any_accent(cue)}(?![^\W_])" for cue in sorted(HEDGE_CUES))
    + r"|(?<![^\W_])[ήἤ](?![^\W_])"
)


@lru_cache(maxsize=16384)
def has_hedge_cue(text: str) -> bool:
    """Whether `text` holds any hedge cue at all (a quick test before the full reading)."""
    return _CUE_RE.search(text.casefold()) is not None


def _disjunction_words(text: str) -> tuple[str, ...]:
    """Tokens of `text` with the accented "ή" (or) kept apart from the article "η"."""
    marked = re.sub(r"(?<![^\W_])[ήἤ](?![^\W_])", " or ", text.casefold())
    return tokens(marked)


def first_line_answer(text: str) -> str | None:
    """A short first line or first sentence that the rest of the reply explains.

    "**Τετάρτη**\\n\\nΗ Τρίτη ήταν η αρχική μέρα…" and "Γαλάτσι. Η Άννα δεν περνάει…" commit
    to their first words. A preamble ("Ας δούμε.", "Sure!"), a heading that ends in a colon,
    a question or a line of working ("48 + 37 = 85") is not an answer.
    """
    lines = iter(line for line in text.strip().splitlines() if _HAS_WORD_RE.search(line))
    first = next(lines, "").strip().lstrip("#>*-• ").strip()
    if not first:
        return None
    if any(sign in first for sign in _WORKING_SIGNS):
        return None  # a line of working ("2(9 + π) = 30 ⇒ …"), not an answer
    candidate = first if next(lines, None) is not None else None
    if candidate is None or more_words_than(candidate, _SHORT_ANSWER_TOKENS):
        candidate = _short_lead(first)
        if candidate is None:
            return None
    words = tokens(candidate)
    if not words or len(words) > _SHORT_ANSWER_TOKENS:
        return None
    stripped = candidate.strip().rstrip("*_ ")
    if stripped.endswith((":", "：", "?", ";")):
        return None
    if fold(words[0]) in _PREAMBLE:
        return None
    return candidate


_LEAD_BREAK_RE = re.compile(r"\s+[-—–]+\s+|\s*[—–(]")


def _short_lead(line: str) -> str | None:
    """The opening of a long line that stands apart as an answer: its first sentence, or the
    words before a dash or bracket ("Τσιρίγου — ο κ. Βασιλάκης φεύγει…")."""
    end = sentence_end(line[:_LEAD_CHARS])
    if end is not None and _HAS_WORD_RE.search(line, end.end()):
        sentence = line[: end.start()]
        if not more_words_than(sentence, _SHORT_ANSWER_TOKENS):
            return sentence
    lead = _LEAD_BREAK_RE.search(line, 0, _LEAD_CHARS)
    if lead is not None and _HAS_WORD_RE.search(line, lead.end()):
        return line[: lead.start()]
    return None


_LEAD_CHARS = 120
"""A lead short enough to be an answer ends within this many characters."""
_WORD_RE = re.compile(r"[^\W_]+")


def more_words_than(text: str, limit: int) -> bool:
    """Whether `text` has more than `limit` words (without tokenising all of a long line)."""
    return sum(1 for _ in zip(range(limit + 1), _WORD_RE.finditer(text), strict=False)) > limit


def alternative_number(context: str, committed: frozenset[Fraction]) -> str | None:
    """A number a hedge cue offers beside the committed one ("412 (or possibly 413)",
    "either 412 or 824", "15, 14 or 16", «204 €, ίσως και 206 €»)."""
    words = _disjunction_words(context)
    for index, word in enumerate(words):
        if word not in HEDGE_CUES:
            continue
        followers = [w for w in words[index + 1 : index + 8] if w not in _FILLER_AFTER_CUE]
        for follower in followers[:2]:
            value = token_value(follower)
            if value is None:
                spelled = word_value(follower)
                value = Fraction(spelled) if spelled is not None else None
            if value is not None:
                if value not in committed:
                    return follower
                break
    return None


_PENDING_RE = re.compile(
    r"\b(?:(?:three|two|four|five|ten) times|twice|half|double|triple) (?:that|this|it|of that)\b"
    r"|\b(?:multiply|multiplied|divide|divided|subtract|subtracted|add|adds|added)\b"
    r"|\b(?:need|needs|have|has) to\b|\bstill\b|\bremains? to\b|\bnext,? we\b"
    r"|\bπρεπει να\b|\bμενει να\b|\bακομα να\b|πολλαπλασιασ|διαιρεσ|αφαιρεσ|προσθεσ"
    r"|τριπλασι|διπλασι|\bτο μισο\b"
)
_WORD_FORMULA_RE = re.compile(r"[^\W\d_]+\s*[×*÷]\s*[^\W\d_]+")
_STATED_RESULT_RE = re.compile(
    r"(?<![^\W_])(?:is|are|equals|gives|makes|comes to|ειναι|κανει|ισουται|βγαινει|δινει)"
    r"\s+[-−]?\d[\d.,/:]*\s*[^\w\s]*\s*$"
)
"""A sentence that ends on its result after a copula ("14 multiplied by 12 is 168.",
«το 15 × 4 κάνει 60»): it names an operation it has done, not one still to do."""


def states_result(sentence: str) -> bool:
    """Whether `sentence` ends on a value after a copula ("… is 168", «η Τετάρτη είναι 18/03»)."""
    return _STATED_RESULT_RE.search(fold(sentence)) is not None


def unfinished_step(text: str) -> str | None:
    """The last sentence, when it announces a step still to do instead of giving a result
    ("We found 96; the count we want is three times that.", "The area is length × width.")."""
    sentences = [s for s in split_sentences(text.strip().splitlines()[-1]) if tokens(s)]
    if not sentences:
        return None
    last = sentences[-1]
    if re.search(r"[=≈→]", last):
        return None
    folded = fold(last)
    if _STATED_RESULT_RE.search(folded):
        return None
    if _PENDING_RE.search(folded) or (
        _WORD_FORMULA_RE.search(last) and not any(c.isdigit() for c in last)
    ):
        return last.strip()
    return None
