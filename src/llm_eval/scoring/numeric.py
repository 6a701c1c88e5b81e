"""The number a math answer states: our own reading first, Math-Verify for what it cannot read.

Our rules handle what models write in plain text and the LaTeX they use most: thousands
separators (`1,234`, `1\\,234`, `14 {,} 916`, `11,\\! 111`), Greek decimal commas (`0,125`),
Unicode minus and `- 7`, `.4`, units (`15\\text{ cm}^2`, `\\mbox{ m}`, `12 ευρώ`),
`x \\approx 11`, scientific notation (`1e3`, `1.2 \\times 10^{3}`) and integer fractions
(`\\frac{8}{4}`). What remains (radicals, nested fractions, expressions) goes to Math-Verify,
the parser and equivalence checker lighteval uses, which evaluates it symbolically.

A reading is a set of values: in a Greek response `1.234` may be 1234 (Greek thousands) or
1.234 (English decimal), so both are kept, and the expected answer is right if it is one of
them. An English response keeps only the English reading.
"""

from __future__ import annotations

import ast
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache

from llm_eval.scoring.normalize import (
    LATEX_TEXT_RE,
    NUMBER_RE,
    has_greek,
    number_value,
    number_words,
    tokens,
)

Reading = frozenset[Fraction]

_UNIT_COMMAND_RE = re.compile(
    r"\\(?:text|mbox|mathrm|textrm|operatorname)\s*\{\s*[^{}\d]*\}"
    r"(?:\s*\^\s*(?:\{\s*\d\s*\}|\d))?"
)
_UNIT_POWER_RE = re.compile(r"(?<=[^\W\d_])\s*\^\s*(?:\{\s*[23]\s*\}|[23])")
_BRACED_COMMA_RE = re.compile(r"(?<=\d)\s*\{,\}\s*(?=\d)")
_COMMA_THIN_SPACE_RE = re.compile(r"(?<=\d),\s*\\!\s*(?=\d)")
_LATEX_NOISE_RE = re.compile(
    r"\\[,!;: ]|\\quad|\\qquad|\\%|\\\$|\$|\\left|\\right|\\displaystyle"
    r"|\^\s*\\circ|\^\s*\{\\circ\}"
)
_SIGN_SPACE_RE = re.compile(r"(?:(?<=^)|(?<=[=\s(\[{]))([-−–])\s+(?=\d)")
_LEADING_POINT_RE = re.compile(r"(?<![\w.,])\.(?=\d)")
_SCI_TIMES_RE = re.compile(
    r"(?<![\w.])(-?\d+(?:\.\d+)?)\s*(?:\\times|×|\\cdot|\*)\s*10\s*\^\s*(?:\{\s*([-−]?\d+)\s*\}|([-−]?\d+))"
)
_SCI_E_RE = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)[eE]([+-]?\d{1,3})(?![\w.])")
_RELATION_RE = re.compile(r"=|≈|:=")
_MATH_SEGMENT_RE = re.compile(r"\$\$?([^$]+)\$\$?|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_RELATION_COMMAND_RE = re.compile(r"\\(?:approx|simeq|sim|equiv)(?![a-zA-Z])")
_ARITHMETIC_RE = re.compile(r"[\d\s.+\-*×/()^{}]*[+*×(^][\d\s.+\-*×/()^{}]*")
_SIMPLE_FRACTION_RE = re.compile(
    r"(-?)\\[dtc]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}|(-?)\\[dtc]?frac\s*(\d)(\d)"
)
_PRODUCT_RE = re.compile(r"\\(?:times|cdot)(?![a-zA-Z])")
_SLASH_FRACTION_RE = re.compile(r"^\s*(-?\d+)\s*/\s*(\d+)\s*$")
_POWER_RE = re.compile(r"^\s*(\d+)\s*\^\s*\{?\s*(\d{1,3})\s*\}?\s*$")
_AMBIGUOUS_RE = re.compile(r"^[-−]?([1-9]\d{0,2})[.,](\d{3})$")
_EXPRESSION_RE = re.compile(r"\\(?:[dtc]?frac|sqrt|pi|sum|prod|binom|log|ln|sin|cos|tan|cdot)")
_MATH_VERIFY_MAX_CHARS = 200


_SUPERSCRIPT_RUN_RE = re.compile(r"(?<=\d)[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


def _superscript_power(match: re.Match[str]) -> str:
    """A superscript exponent as a caret power: "10³" is "10^3", "10⁻⁷" is "10^-7"."""
    return "^" + match.group(0).translate(_SUPERSCRIPTS).replace("+", "")


def math_text(text: str) -> str:
    """`text` with units, LaTeX spacing and typography reduced so numbers read plainly."""
    text = _SUPERSCRIPT_RUN_RE.sub(_superscript_power, text)
    text = _UNIT_COMMAND_RE.sub("", text)
    text = LATEX_TEXT_RE.sub(r"\1", text)
    text = _BRACED_COMMA_RE.sub(",", _COMMA_THIN_SPACE_RE.sub(",", text))
    text = _LATEX_NOISE_RE.sub("", text).replace("−", "-")
    text = _RELATION_COMMAND_RE.sub(" ≈ ", text)
    text = _SIGN_SPACE_RE.sub(r"\1", text)
    text = _LEADING_POINT_RE.sub("0.", text)
    text = _SCI_TIMES_RE.sub(_scientific, text)
    text = _SCI_E_RE.sub(_scientific, text)
    text = _SIMPLE_FRACTION_RE.sub(_fraction_literal, text)
    text = _PRODUCT_RE.sub(" × ", text)
    return _UNIT_POWER_RE.sub("", text)


def _scientific(match: re.Match[str]) -> str:
    exponent = next(group for group in match.groups()[1:] if group is not None)
    try:
        value = Decimal(match.group(1)).scaleb(int(exponent.replace("−", "-")))
    except (InvalidOperation, ValueError):
        return match.group(0)
    return format(value, "f")


def _fraction_literal(match: re.Match[str]) -> str:
    """A simple `\\frac{a}{b}` as a plain number when it has a finite decimal, else `a/b`."""
    sign, numerator, denominator = (
        (match.group(1), match.group(2), match.group(3))
        if match.group(2) is not None
        else (match.group(4), match.group(5), match.group(6))
    )
    if int(denominator) == 0:
        return match.group(0)
    value = Fraction(int(numerator), int(denominator)) * (-1 if sign else 1)
    return _plain_number(value)


def _plain_number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    scaled = value * 10**12
    if scaled.denominator == 1:  # a finite decimal: write it out
        return format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    return f"{value.numerator}/{value.denominator}"


@lru_cache(maxsize=65536)
def stated_reading(text: str, greek: bool = False) -> Reading | None:
    """The values the one number stated in a final answer may have ("x = 42", "\\frac{1}{2}").

    After the last relation sign ("=", "≈") the answer must name exactly one number; several
    different numbers (a list, a range) state none. An approximation ("x = 1/3 ≈ 0.33") may be
    read either way: the exact value or the approximate one.
    """
    plain = math_text(text)
    if "≈" in plain:
        head, _, approximate = plain.rpartition("≈")
        exact = _stated(_after_relation(head), greek)
        rough = _stated(approximate, greek)
        if exact is not None and rough is not None:
            return exact | rough
        return exact if rough is None else rough
    return _stated(_after_relation(plain), greek)


def _after_relation(plain: str) -> str:
    """What follows the last relation sign of text already passed through `math_text`."""
    return _RELATION_RE.split(plain)[-1]


def _stated(tail: str, greek: bool) -> Reading | None:
    """The one number `tail` (normalised, past any relation sign) states, if it states one."""
    special = _special(tail) or _arithmetic(tail)
    if special is not None:
        return frozenset({special})
    if _EXPRESSION_RE.search(tail):
        return None
    readings = [_reading(match, greek) for match in NUMBER_RE.finditer(tail)]
    if readings:
        distinct = {min(reading) for reading in readings}
        return readings[-1] if len(distinct) == 1 else None
    spelled = number_words(tokens(tail))
    return frozenset({Fraction(spelled[-1])}) if spelled else None


@lru_cache(maxsize=65536)
def first_reading(text: str, greek: bool = False) -> Reading | None:
    """The values of the first number a marked answer gives (after its last relation sign)."""
    tail = _after_relation(math_text(text))
    special = _special(tail)
    if special is not None:
        return frozenset({special})
    match = NUMBER_RE.search(tail)
    if match is not None:
        return _reading(match, greek)
    spelled = number_words(tokens(tail))
    return frozenset({Fraction(spelled[0])}) if spelled else None


def last_reading(text: str) -> tuple[str, Reading | None] | None:
    """The last number of a response (LaTeX-aware), as (what was read, its values).

    A fraction or radical written last ("… = \\frac{1+\\sqrt5}{2}") is the last item, so its
    denominator is never mistaken for the answer; its values come from Math-Verify. A slash
    fraction ("7/2") is read whole.
    """
    segments = list(_MATH_SEGMENT_RE.finditer(text))
    if segments and not text[segments[-1].end() :].strip(" .\n"):
        # The response ends in a math segment ("… so $x = \\frac{7}{2}$"): it is the answer.
        content = next(group for group in segments[-1].groups() if group is not None)
        reading = stated_reading(content, has_greek(text))
        if reading is not None:
            return content.strip(), reading
    plain = math_text(text)
    number = None
    for number in NUMBER_RE.finditer(plain):  # noqa: B007 - we want the final match
        pass
    run = _last_math_run(plain)
    if run is not None and (number is None or number.start() < run[1]):
        span = plain[run[0] : run[1]].strip()
        tail = _RELATION_RE.split(span)[-1].strip()
        if tail and not _EXPRESSION_RE.search(tail):
            return span, stated_reading(tail, has_greek(text))
        return span, math_verify_reading(tail)
    if number is None:
        return None
    before = re.search(r"(-?\d+)\s*/\s*$", plain[: number.start()])
    if before is not None and number_value(number):
        value = Fraction(int(before.group(1))) / number_value(number)
        return before.group(0) + number.group(0), frozenset({value})
    after = re.match(r"\s*/\s*(\d+)", plain[number.end() :])
    if after and int(after.group(1)):
        value = number_value(number) / int(after.group(1))
        return number.group(0) + after.group(0), frozenset({value})
    return number.group(0), _reading(number, has_greek(text))


def _last_math_run(plain: str) -> tuple[int, int] | None:
    """(start, end) of the last stretch of math that holds a fraction, radical or the like."""
    last: tuple[int, int] | None = None
    for expression in _EXPRESSION_RE.finditer(plain):
        if last is not None and expression.start() < last[1]:
            continue  # inside the run already found ("\\sqrt" within "\\frac{1+\\sqrt5}{2}")
        end = _MATH_RUN_END_RE.search(plain, expression.end())
        last = (expression.start(), end.start() if end else len(plain))
    return last


# Where a run of math ends: a line break, or prose (a word of three or more letters).
_MATH_RUN_END_RE = re.compile(r"\n|\s(?=[^\W\d_]{3,}\b)|[.;](?=\s|$)")


def _reading(match: re.Match[str], greek: bool) -> Reading:
    """Every value a written number may have, given whether its context is Greek."""
    value = number_value(match)
    ambiguous = _AMBIGUOUS_RE.match(match.group(0))
    if ambiguous is None or not greek:
        return frozenset({value})
    whole = Fraction(int(ambiguous.group(1) + ambiguous.group(2)))
    decimal = Fraction(f"{ambiguous.group(1)}.{ambiguous.group(2)}")
    sign = -1 if match.group(0).startswith(("-", "−")) else 1
    return frozenset({value, whole * sign, decimal * sign})


def _arithmetic(text: str) -> Fraction | None:
    """The value of a plain arithmetic answer with a sum, a product or brackets ("(9+1)").

    A bare difference ("3-5") is left alone: in a final answer it is more often a range.
    """
    if not _ARITHMETIC_RE.fullmatch(text.strip()) or not any(c.isdigit() for c in text):
        return None
    try:
        plain = text.strip().replace("×", "*").replace("^", "**").replace("{", "(")
        tree = ast.parse(plain.replace("}", ")"), mode="eval")
        return _evaluate(tree.body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


_MAX_EXPONENT = 64


def _evaluate(node: ast.expr) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, exponent = _evaluate(node.left), _evaluate(node.right)
        # Small whole powers only: "2^3", never "9^9^9".
        if exponent.denominator != 1 or not 0 <= exponent <= _MAX_EXPONENT or abs(base) > 10**6:
            raise ValueError("not a small power")
        return base ** int(exponent)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        return left / right
    raise ValueError("not plain arithmetic")


def _special(text: str) -> Fraction | None:
    if (match := _SLASH_FRACTION_RE.match(text)) and int(match.group(2)):
        return Fraction(int(match.group(1)), int(match.group(2)))
    if match := _POWER_RE.match(text):
        return Fraction(int(match.group(1)) ** int(match.group(2)))
    return None


ROUNDING_TOLERANCE = Fraction(1, 10**6)
"""How close a decimal must come to an expected fraction with no finite decimal (1/12)."""


def agrees(expected: Fraction, reading: Reading) -> bool:
    """Whether a reading gives the expected value: exactly, or, for a fraction with no finite
    decimal, as a decimal written to at least six places ("0.0833333" for 1/12)."""
    if expected in reading:
        return True
    if _plain_number(expected).count("/") == 0:
        return False  # a finite decimal must be written exactly
    return any(abs(value - expected) < ROUNDING_TOLERANCE for value in reading)


def has_expression(text: str) -> bool:
    """Whether `text` holds LaTeX beyond plain numbers (a fraction, radical, constant, ...)."""
    return _EXPRESSION_RE.search(text) is not None


def expected_value(answer: str) -> Fraction | None:
    """The expected answer as one number (digits, a fraction "1/2", a power "10^3")."""
    reading = stated_reading(answer)
    return min(reading) if reading is not None and len(reading) == 1 else None


@lru_cache(maxsize=4096)
def math_verify_reading(latex: str) -> Reading | None:
    """The exact value of a closed-form expression, by Math-Verify.

    None when it cannot be read as a number; an empty reading for a real number that is not
    rational (`\\frac{1+\\sqrt5}{2}`), which no integer or fraction answer equals. Only short
    expressions are parsed (sympy can take long on big ones), and without Math-Verify's
    signal-based timeout, which works in the main thread only.
    """
    if len(latex) > _MATH_VERIFY_MAX_CHARS:
        return None
    import math_verify.parser
    import sympy
    from math_verify import LatexExtractionConfig, parse

    # We bound the input's size instead of using Math-Verify's alarm-based timeout.
    math_verify.parser.TIMEOUT_WARNING_SHOWN = True

    try:
        parsed = parse(
            f"${latex}$", extraction_config=[LatexExtractionConfig()], parsing_timeout=None
        )
        for item in parsed:
            if isinstance(item, sympy.Basic) and item.is_number and item.is_real:
                value = sympy.nsimplify(item)
                if value.is_Rational:
                    return frozenset({Fraction(int(value.p), int(value.q))})
                return frozenset()
    except Exception:  # Math-Verify or sympy could not read it: no value
        return None
    return None
