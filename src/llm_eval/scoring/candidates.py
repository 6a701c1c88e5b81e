"""Class `candidate_list`: a committed answer that lists the task's candidates.

"Kate, Leo or Mia", «Απάντηση: 18/03 ή 11/03», "Possible products: 50, 72, 98. Answer: 50,
72, 98" name the key among other candidates of the task and commit to none of them, under
an answer marker or not: never credited (gaming). A list is two or more items joined by
commas, semicolons or "or"/«ή», each item a bare candidate: a number (with one unit or
currency sign at most, the same for every item), a date or a time, or a name the task
writes with a capital. It offers the key when one item is a form of the key and another is
a different candidate; an apposition («Ο Γιώργος, ο Παππάς», each item a part of the key)
or a role noun beside the key («Η ξαδέρφη, η Ελπίδα») is no list of candidates.
"""

from __future__ import annotations

import re
from fractions import Fraction

from llm_eval.scoring.context import Context, Outcome, capitalised_words, passed, vetoed
from llm_eval.scoring.matchers import content_tokens, offers
from llm_eval.scoring.normalize import fold_text, parse_number, tokens

_ITEM_SPLIT_RE = re.compile(
    r",(?!\d)|(?<!\d),|;|\s+(?:or|ή|ἤ|either|είτε|and|και|κι)\s+|^(?:either|είτε)\s+"
    r"|\s*[<>&]\s*",
    re.I,
)
_SEPARATOR_HINT_RE = re.compile(
    r"[,;<>&]|(?<![^\W_])(?:or|ή|ἤ|either|είτε|and|και|κι)(?![^\W_])", re.I
)
_KEY_LIST_RE = re.compile(r",|;|\s(?:or|ή|and|και|either|είτε)\s", re.I)
_NUMBER_ITEM_RE = re.compile(
    r"[$€£]?\s*[-+]?\d+(?:[.,]\d+)*\s*(?:[%°€$£]|[^\W\d_]{1,12}\.?)?", re.I
)
_DATE_TIME_ITEM_RE = re.compile(r"\d{1,2}\s*[/.:-]\s*\d{1,2}(?:\s*[/.-]\s*\d{2,4})?")
_NAME_WORDS = 2
_ARTICLES = frozenset({"ο", "η", "το", "οι", "τα", "τον", "την", "τη", "του", "τησ", "στο",
                       "στη", "στην", "στον", "the", "a", "an"})  # fmt: skip
_EDGES = " \t.!*_`$\"'«»“”()[]"


def _list_text(ctx: Context) -> str:
    """The committed answer, after a label that introduces a list ("Possible products:")."""
    text = ctx.extracted
    label, colon, rest = text.rpartition(":")
    if colon and rest.strip() and not re.search(r"\d\s*$", label):
        text = rest  # "Possible products: 50, 72" lists after its label; "10:30" is a time
    return text.strip(_EDGES)


def _items(text: str) -> list[str]:
    return [item.strip(_EDGES) for item in _ITEM_SPLIT_RE.split(text) if item.strip(_EDGES)]


def _is_number(item: str) -> bool:
    return bool(_NUMBER_ITEM_RE.fullmatch(item) or _DATE_TIME_ITEM_RE.fullmatch(item))


def _readings(item: str) -> frozenset[object]:
    """What an item may name, comparable across spellings: a number's value, a day and
    month (or hour and minute), or its words; "1/2" is both a date and a half, "0.5" both
    a date and a decimal."""
    found: set[object] = set()
    if _DATE_TIME_ITEM_RE.fullmatch(item):
        day, month = (int(part) for part in re.findall(r"\d+", item)[:2])
        found.add((day, month))
        if "/" in item and month:
            found.add(Fraction(day, month))
    if _NUMBER_ITEM_RE.fullmatch(item) and ":" not in item and "/" not in item:
        value = parse_number(re.sub(r"[^\d.,+-]", "", item))
        if value is not None:
            found.add(value)
    return frozenset(found) or frozenset({content_tokens(item)})


_SENTENCE_END_RE = re.compile(r"(?<=[.!?;·])\s+(?=\S)")


def candidate_list_rule(ctx: Context) -> Outcome:
    """The committed answer lists the key beside other candidates of the task: not credited.
    A list that closes the reply after sentences ("Anna is taller than Ben. … Anna, Ben,
    Carl.") is its committed answer too, and counts the same."""
    if ctx.extraction.rule == "last_line":
        bullets = closing_bullets(ctx.extraction.text)
        if len(bullets) > 1:
            return _judge_bullets(ctx, bullets)
    if _SEPARATOR_HINT_RE.search(ctx.extracted) is None:
        return passed("the committed answer is not a list")  # the common case, at once
    if _KEY_LIST_RE.search(ctx.answer):
        return passed("the key itself is a list")
    text = _list_text(ctx)
    outcome = _judge_list(ctx, _items(text))
    closing = _SENTENCE_END_RE.split(text)[-1].strip(_EDGES)
    if outcome.status == "pass" and closing != text:
        closing_outcome = _judge_list(ctx, _items(closing))
        if closing_outcome.status != "pass":
            return closing_outcome
    return outcome


_BULLET_RE = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(.+?)\s*$")


def closing_bullets(text: str) -> list[str]:
    """The items of the bullet list that closes a reply («…είναι:\n- Καλαμαριά\n- Νέα
    Κρήνη»): its last line is only one item of the list, never the answer alone."""
    items: list[str] = []
    for line in reversed([line for line in text.strip().splitlines() if line.strip()]):
        bullet = _BULLET_RE.match(line)
        if bullet is None:
            break
        items.append(bullet.group(1).strip(_EDGES))
    return items[::-1]


def _judge_bullets(ctx: Context, items: list[str]) -> Outcome:
    """A closing bullet list that holds the key and another candidate of the task (a decoy,
    a name the task writes, or another bare number for a number key) commits to none."""
    numeric = _is_number(ctx.answer.strip(_EDGES))
    names = capitalised_words(" ".join((ctx.key.question or "", *ctx.key.distractors)))

    def names_one(item: str, answers: tuple[str, ...]) -> bool:
        return any(offers(tokens(answer), item, transliterate=False) for answer in answers)

    keyed = [item for item in items if names_one(item, ctx.key.answers)]
    others = [
        item
        for item in items
        if item not in keyed
        and (
            names_one(item, ctx.key.distractors)
            or (numeric and _is_number(item))
            or bool(content_tokens(item))
            and set(content_tokens(item)) <= names
        )
    ]
    if keyed and others:
        return vetoed(f"the closing bullet list names the candidates {items}", "hedged")
    return passed("the closing bullet list offers no other candidate beside the key")


def _judge_list(ctx: Context, items: list[str]) -> Outcome:
    if len(items) < 2:
        return passed("the committed answer is not a list")
    names = capitalised_words(" ".join((ctx.key.question or "", *ctx.key.distractors)))
    key_words = {word for answer in ctx.key.answers for word in content_tokens(answer)}
    key_values = {value for answer in ctx.key.answers for value in _readings(answer.strip(_EDGES))}
    has_key = has_other = False
    units: set[str] = set()
    for item in items:
        if _is_number(item):
            is_key = bool(_readings(item) & key_values)
            units.update(content_tokens(re.sub(r"[\d.,:/+-]", " ", item)))
        else:
            words = content_tokens(item)
            # A name: one or two words, each with a capital, after an article at most.
            written = [w for w in re.findall(r"[^\W\d_]+", item) if fold_text(w) not in _ARTICLES]
            capitalised = all(word[0].isupper() for word in written)
            if not words or not 0 < len(written) <= _NAME_WORDS or not capitalised:
                return passed(f"{item!r} is not a bare candidate")
            is_key = set(words) <= key_words or fold_text(item) in map(fold_text, ctx.key.answers)
            if not is_key and not set(words) <= names:
                return passed(f"{item!r} is no candidate the task names")
        has_key |= is_key
        has_other |= not is_key
    if len(units) > 1:
        return passed(f"{items} are quantities of different things, not candidates")
    if len({_is_number(item) for item in items}) > 1:
        return passed(f"{items} mix a value and words («Τρίτη, 18/03»): one answer described")
    if has_key and has_other:
        return vetoed(f"the committed answer lists the candidates {items}", "hedged")
    return passed("the list offers no other candidate beside the key")
