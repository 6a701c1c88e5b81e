"""Unit tests of the scoring package: extraction, normalisation, matchers, scorers, registry."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from llm_eval.scoring import (
    SCORER_KINDS,
    AnswerKey,
    RuleTrace,
    ScoreResult,
    explain_text,
    register_scorer,
    score_text,
)
from llm_eval.scoring.extraction import boxed_spans, clean_answer, extract_answer, strip_reasoning
from llm_eval.scoring.matchers import (
    contains_sequence,
    content_tokens,
    covers,
    dates_in,
    first_polarity,
    is_hedged,
    says_both,
)
from llm_eval.scoring.normalize import (
    cross_script,
    find_numbers,
    fold,
    fold_text,
    month_value,
    number_words,
    parse_number,
    script,
    skeleton_match,
    skeletons,
    tokens,
    word_value,
)
from llm_eval.scoring.numeric import stated_reading

# --- Extraction ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Reasoning...\nFinal answer: 42", "42"),
        ("answer: Carl", "Carl"),
        ("The answer is Carl.", "Carl"),
        ("So the correct answer is blue. It is the only box left.", "blue"),
        ("Απάντηση: Μαρίνα", "Μαρίνα"),
        ("ΑΠΑΝΤΗΣΗ: Μαρίνα", "Μαρίνα"),
        ("Τελική απάντηση: Γιάννης", "Γιάννης"),
        ("Η απάντηση είναι: **Θεσσαλονίκη**.", "Θεσσαλονίκη"),
        ("Η απάντηση είναι η Μαρίνα.", "η Μαρίνα"),
        ("apantisi: Giannis", "Giannis"),
        ("Apanthsh: Giannis", "Giannis"),
        ("**Final answer:** 7", "7"),
        ("**Answer**: 7", "7"),
        ("Απάντηση:\n\n  Μαρίνα  ", "Μαρίνα"),
    ],
)
def test_markers_in_english_greek_and_greeklish(response: str, expected: str) -> None:
    extraction = extract_answer(response)
    assert extraction.rule == "marker"
    assert extraction.answer == expected


def test_the_last_marker_wins() -> None:
    assert extract_answer("Answer: 41\nOn reflection...\nFinal answer: 42").answer == "42"


def test_boxed_with_nested_braces_and_the_last_box_wins() -> None:
    text = r"First \boxed{\frac{1}{2}} then \boxed{\text{x}_{1} = 3}"
    assert [content for _, content in boxed_spans(text)] == [r"\frac{1}{2}", r"\text{x}_{1} = 3"]
    extraction = extract_answer(text)
    assert extraction.rule == "boxed"
    assert extraction.boxed == r"\text{x}_{1} = 3"


def test_a_box_after_a_marker_wins_and_a_marker_holding_a_box_uses_it() -> None:
    assert extract_answer("Answer: maybe 5\n\n\\boxed{6}").answer == "6"
    assert extract_answer("Final answer: \\boxed{42}").answer == "42"


def test_bold_then_last_line() -> None:
    assert extract_answer("The driver was **Giannis**, clearly.").rule == "bold"
    extraction = extract_answer("Let me think.\n\n- Μαρίνα.\n\n")
    assert (extraction.rule, extraction.answer) == ("last_line", "Μαρίνα")


def test_bold_labels_and_headings_are_not_answers() -> None:
    assert extract_answer("**Ανάλυση:**\nΗ Μαρία γράφει.\nΜαρίνα").answer == "Μαρίνα"
    assert extract_answer("**Ανάλυση**: κείμενο\nΜαρίνα").answer == "Μαρίνα"
    assert extract_answer("## **Λύση**\nΗ Μαρία γράφει.\nΜαρίνα").answer == "Μαρίνα"
    assert extract_answer("**Λύση**\nΚείμενο.\n\n**Μαρίνα**").rule == "bold"


def test_courtesy_lines_are_passed_over() -> None:
    assert extract_answer("Μαρίνα\n\nΕλπίζω να βοήθησα!").answer == "Μαρίνα"
    assert extract_answer("Marina\nHope this helps!").answer == "Marina"
    assert extract_answer("Γιάννης\n\nΑν χρειάζεσαι κάτι άλλο, πες μου!").answer == "Γιάννης"


def test_last_line_records_a_follow_up_question() -> None:
    assert extract_answer("Δεν το λέει καθαρά το μήνυμα\nΘέλεις να σου εξηγήσω;").question
    assert not extract_answer("Γιάννης").question


def test_a_short_first_line_before_a_follow_up_question_is_the_answer() -> None:
    extraction = extract_answer("Γιάννης\nΘέλεις να σου εξηγήσω;")
    assert (extraction.answer, extraction.rule) == ("Γιάννης", "first_line")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<think>answer is 41</think>The answer is 42", "The answer is 42"),
        ("<THINK>a</THINK>\n<think>b</think>x", "x"),
        ("<think>never closed, the answer is 41", ""),
        ("reasoning leaked without an opening tag</think>42", "42"),
        ("<reasoning>r</reasoning>ok", "ok"),
    ],
)
def test_reasoning_blocks_are_removed_first(response: str, expected: str) -> None:
    assert strip_reasoning(response) == expected


def test_empty_responses_extract_nothing() -> None:
    for response in ("", "   \n", "<think>only thoughts</think>", "---\n***"):
        assert extract_answer(response).answer is None


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("«Μαρίνα».", "Μαρίνα"),
        ('"Carl"', "Carl"),
        ("$42$", "42"),
        (r"\(42\)", "42"),
        (r"\text{blue}", "blue"),
        ("**Θεσσαλονίκη**!", "Θεσσαλονίκη"),
        ("- Μαρίνα", "Μαρίνα"),
        ("(a) or (b)", "(a) or (b)"),
    ],
)
def test_clean_answer_strips_wrapping(raw: str, clean: str) -> None:
    assert clean_answer(raw) == clean


# --- Normalisation -------------------------------------------------------------------------


def test_fold_case_accents_final_sigma_and_keeps_the_diaeresis_apart() -> None:
    assert fold("ΆΝΝΑ Μαΐου Ευάγγελος") == "αννα μαϊου ευαγγελοσ"
    assert fold_text("ΆΝΝΑ Μαΐου") == fold_text("αννα μαιου")
    assert fold("Ἀθῆναι") == "αθηναι"
    assert fold("ﬁve") == "five"  # NFKC


def test_mixed_script_words_are_repaired_but_latin_words_are_not() -> None:
    assert tokens("H ANNA ΘA EPΘEI") == ("h", "anna", "θα", "ερθει")
    assert tokens("Τεtάρτη Κωμωδiα Δευτέpα") == ("τεταρτη", "κωμωδια", "δευτερα")


def test_tokens_keep_numbers_whole() -> None:
    assert tokens("3,2 κιλά 10:30 1.5 15. -3 3rd 12η Spiti_5G") == (
        "3,2",
        "κιλα",
        "10:30",
        "1.5",
        "15",
        "-3",
        "3rd",
        "12η",
        "spiti",
        "5g",
    )
    assert fold_text("  Θεσσαλονίκη!! ") == "θεσσαλονικη"


@pytest.mark.parametrize(
    ("greek", "greeklish"),
    [
        ("θάλασσα", "thalassa"),
        ("θάλασσα", "8alassa"),  # θ = th / 8
        ("χρόνια", "xronia"),
        ("χρόνια", "hronia"),
        ("χρόνια", "chronia"),  # χ = x / h / ch
        ("ξέρω", "ksero"),
        ("ξέρω", "xerw"),
        ("ξέρω", "3erw"),  # ξ = ks / x / 3
        ("ψωμί", "psomi"),  # ψ = ps
        ("κήπος", "kipos"),
        ("κήπος", "khpos"),
        ("κύμα", "kyma"),  # η, υ = i / h / y
        ("είναι", "inai"),
        ("είναι", "einai"),
        ("κοιτάω", "kitao"),  # ει, οι
        ("ώρα", "wra"),
        ("ώρα", "ora"),  # ω = o / w
        ("ουρανός", "ouranos"),
        ("ουρανός", "uranos"),  # ου = ou / u
        ("μπάλα", "mpala"),
        ("μπάλα", "bala"),  # μπ = mp / b
        ("ντομάτα", "ntomata"),
        ("ντομάτα", "domata"),  # ντ = nt / d
        ("γκαράζ", "gkaraz"),
        ("γκαράζ", "garaz"),
        ("άγγελος", "angelos"),  # γκ / γγ
        ("αυτό", "afto"),
        ("αυτό", "avto"),
        ("αυτό", "auto"),
        ("αυτό", "ayto"),  # αυ
        ("ευχή", "efxi"),
        ("ευχή", "evxi"),
        ("ευχή", "euxh"),
        ("ευχή", "eyxh"),  # ευ
        ("βάζο", "vazo"),
        ("βάζο", "bazo"),  # β = v / b
        ("δέμα", "dema"),
        ("δέμα", "dhema"),  # δ = d / dh
        ("φως", "fos"),
        ("φως", "phos"),  # φ = f / ph
        ("Γιάννης", "Yiannis"),
        ("στην", "sthn"),
        ("Ραφαήλ", "Rafail"),
    ],
)
def test_greeklish_spellings_share_the_greek_skeleton(greek: str, greeklish: str) -> None:
    (g,) = tokens(greek)
    (latin,) = tokens(greeklish)
    assert skeleton_match(g, latin), (skeletons(g), skeletons(latin))


@pytest.mark.parametrize(
    ("greek", "latin"),
    [
        ("Κυριακή", "Kyriake"),  # e never stands for η
        ("Μαρίνα", "Maria"),
        ("Δευτέρα", "Defteri"),
        ("χρόνια", "kronia"),
        ("ταξί", "taxidi"),
    ],
)
def test_near_misses_have_different_skeletons(greek: str, latin: str) -> None:
    (g,) = tokens(greek)
    (t,) = tokens(latin)
    assert not skeleton_match(g, t)


def test_x_reads_as_chi_or_xi_but_greek_keeps_them_apart() -> None:
    assert skeleton_match("χανια", "xania") and skeleton_match("ξανθη", "xanthi")
    assert not skeleton_match("χανια", "ksania")  # ks is only ξ
    assert not skeleton_match("εχω", "εξω")  # Greek vs Greek is never transliterated


def test_transliteration_only_bridges_alphabets() -> None:
    assert script("σταφυλια") == "greek" and script("bet") == "latin"
    assert script("τεtαρτη") == "mixed" and script("15") == "number"
    assert cross_script("σταφυλια", "stafylia")
    assert not cross_script("σταφυλια", "σταφιλια")  # a misspelling stays a misspelling
    assert not cross_script("bet", "vet")


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("δεκαπέντε", [15]),
        ("dekapente", [15]),
        ("τριάντα οχτώ", [38]),
        ("forty-two", [42]),
        ("εκατόν πενήντα", [150]),
        ("πενήντα ένα", [51]),
        ("δέκα πέντε", [10, 5]),
        ("μηδέν", [0]),
        ("εφτά και εννιά", [7, 9]),
    ],
)
def test_number_words(text: str, values: list[int]) -> None:
    assert number_words(tokens(text)) == values


def test_word_value_of_non_numbers_is_none() -> None:
    assert word_value("μαρινα") is None and word_value("to") is None


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("1,000", [1000]),
        ("1 000", [1000]),
        ("1\u202f000", [1000]),
        ("1{,}000", [1000]),
        (r"1\,000", [1000]),
        ("5,736,396", [5736396]),
        ("1.000", [1]),
        ("42.0", [42]),
        ("3,2 κιλά", [Fraction(16, 5)]),
        ("-5", [-5]),
        ("x2 H2O", []),
        ("12,5000", [Fraction(25, 2)]),
        ("15 and 150", [15, 150]),
    ],
)
def test_find_numbers(text: str, values: list[Fraction]) -> None:
    assert find_numbers(text) == values


def test_parse_number_accepts_only_a_bare_number() -> None:
    assert parse_number("42") == 42 and parse_number("45€") == 45 and parse_number("50%") == 50
    assert parse_number("12 Μαΐου") is None and parse_number("7:45") is None


def test_month_names_in_greek_greeklish_and_english() -> None:
    assert [month_value(t) for t in tokens("Μαΐου Μάη Maiou May Ιουλίου Σεπτέμβρη")] == [
        5,
        5,
        5,
        5,
        7,
        9,
    ]


@pytest.mark.parametrize(
    ("content", "value"),
    [
        ("42", 42),
        ("x = 42", 42),
        (r"\frac{1}{2}", Fraction(1, 2)),
        ("1/2", Fraction(1, 2)),
        ("2^{10}", 1024),
        (r"1\,000", 1000),
        (r"90^\circ", 90),
        (r"\text{42 apples}", 42),
        ("7, 8", None),
        ("no number", None),
    ],
)
def test_stated_number_of_a_box(content: str, value: Fraction | None) -> None:
    reading = stated_reading(content)
    assert (min(reading) if reading else None) == value


# --- Matchers ------------------------------------------------------------------------------


def test_containment_is_on_whole_tokens() -> None:
    assert contains_sequence(("green",), tokens("the green box"), transliterate=False)
    assert not contains_sequence(("green",), tokens("evergreen"), transliterate=False)
    assert not contains_sequence(("ναι",), tokens("Είναι"), transliterate=False)
    assert not contains_sequence(("15",), tokens("150 1.5 51"), transliterate=False)
    assert contains_sequence(("8",), tokens("8,00 €"), transliterate=False)  # same value


def test_content_tokens_drop_articles_and_stopwords() -> None:
    assert content_tokens("Η απάντηση είναι η Μαρίνα") == ("μαρινα",)
    assert content_tokens("The answer is the blue one") == ("blue", "one")
    assert covers(("κοκκινο", "αυτοκινητο"), tokens("Το αυτοκίνητο είναι κόκκινο"))


@pytest.mark.parametrize(
    ("segment", "hedged"),
    [
        ("Μαρία ή Μαρίνα", True),
        ("η Μαρίνα ή η Μαρία;", True),
        ("Maria or Marina", True),
        ("Μαρία/Μαρίνα", True),
        ("Μαρία, Μαρίνα", True),
        ("Θα τα πάρει η Μαρίνα, όχι η Μαρία.", False),
        ("Η Μαρίνα θα τα πάρει, γιατί η Μαρία δουλεύει ή έχει εφημερία.", False),
        ("η Μαρίνα", False),
        ("18/20", False),
    ],
)
def test_hedging(segment: str, hedged: bool) -> None:
    assert is_hedged(segment, near=lambda word: word in ("μαρινα", "marina")) is hedged


def test_polarity() -> None:
    assert first_polarity("Όχι, δεν είναι ναι") is False
    assert first_polarity("Ναι, έχει εμβολιαστεί") is True
    assert first_polarity("Είναι κλειστό") is None
    assert says_both("Ναι και όχι") and not says_both("Όχι, δεν είναι ναι")


def test_dates() -> None:
    assert dates_in("12/5, 12-05-2024, 12η Μαΐου, May 12, 12 Maiou") == [
        (12, 5, None),
        (12, 5, 2024),
        (12, 5, None),
        (12, 5, None),
        (12, 5, None),
    ]
    assert dates_in("18/20 and 10:30") == []


# --- Scorers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "answer", "kind", "method", "correct"),
    [
        ("Μαρίνα", "Μαρίνα", "language", "exact", True),
        ("Ιουλίου", "Ιούλιος", "language", "regex", True),
        ("Ναι, φυσικά.", "ναι", "language", "yes_no", True),
        ("Τα παιδιά θα τα πάρει η Μαρίνα.", "Μαρίνα", "language", "containment", True),
        ("δεκαπέντε", "15", "language", "number_words", True),
        ("12/5", "12 Μαΐου", "language", "date", True),
        ("8essaloniki", "Θεσσαλονίκη", "language", "transliteration", True),
        ("Marina", "η Μαρίνα", "language", "token_coverage", True),
        ("Μαρία ή Μαρίνα", "Μαρίνα", "language", "hedged", False),
        ("Μαρία", "Μαρίνα", "language", "no_match", False),
        ("", "Μαρίνα", "language", "empty_response", False),
        ("\\boxed{42}", "42", "numeric", "exact", True),
        ("\\boxed{42.0}", "42", "numeric", "numeric_boxed", True),
        ("\\boxed{41} but really 42", "42", "numeric", "boxed_mismatch", False),
        ("Answer: 42 apples", "42", "numeric", "numeric_marker", True),
        ("6 * 7 = 42", "42", "numeric", "numeric_last", True),
        ("forty-two", "42", "numeric", "number_words", True),
        ("Final answer: 43", "42", "numeric", "no_match", False),
        ("The code word is harbor.", "harbor", "exact", "containment", True),
    ],
)
def test_method_names(response: str, answer: str, kind: str, method: str, correct: bool) -> None:
    regex = "(?i)^(ιούλιος|ιουλίου)$" if answer == "Ιούλιος" else None
    result = score_text(response, answer, answer_regex=regex, kind=kind)
    assert (result.method, result.correct) == (method, correct), result


def test_extracted_is_none_only_for_empty_responses() -> None:
    assert score_text("", "x").extracted is None
    assert score_text("Final answer: 7", "7", kind="numeric").extracted == "7"


def test_a_wrong_box_decides_even_if_the_right_number_appears() -> None:
    result = score_text("42 is tempting, but \\boxed{24}", "42", kind="numeric")
    assert not result.correct and result.method == "boxed_mismatch"


def test_a_box_blocks_the_regex_on_the_raw_response() -> None:
    result = score_text("42\n\\boxed{41}", "42", answer_regex="42", kind="numeric")
    assert not result.correct


def test_a_fraction_answer_is_a_number() -> None:
    assert score_text("\\boxed{0.5}", "1/2", kind="numeric").method == "numeric_boxed"
    assert not score_text("\\boxed{0.25}", "1/2", kind="numeric").correct


def test_numeric_with_a_non_numeric_answer_falls_back_to_exact() -> None:
    assert score_text("Final answer: 7:45", "7:45", kind="numeric").correct
    assert not score_text("Final answer: 8:45", "7:45", kind="numeric").correct


def test_exact_contains_single_words_only() -> None:
    several_words = score_text("I say New York.", "New York", kind="exact")
    assert not several_words.correct and several_words.verdict == "unsure"
    assert score_text("I say York.", "York", kind="exact").correct


def test_unknown_kind_names_the_valid_kinds() -> None:
    # Other tests may register scorers of their own: the built-in kinds must all be named.
    with pytest.raises(ValueError) as raised:
        score_text("x", "x", kind="fuzzy")
    assert all(kind in str(raised.value) for kind in ("exact", "language", "numeric"))
    with pytest.raises(ValueError, match="unknown scorer kind"):
        explain_text("x", "x", kind="fuzzy")


def test_a_bad_regex_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="does not compile"):
        score_text("x", "y", answer_regex="(")


def test_register_a_scorer_with_one_function() -> None:
    @register_scorer("test_upper")
    def score_upper(response: str, key: AnswerKey) -> ScoreResult:
        return ScoreResult(
            correct=response.upper() == key.answer, method="upper", extracted=response
        )

    try:
        assert SCORER_KINDS["test_upper"] is score_upper
        assert score_text("ab", "AB", kind="test_upper").correct
        traces = explain_text("ab", "AB", kind="test_upper")
        assert [t.rule for t in traces] == ["verdict"] and traces[0].matched
    finally:
        del SCORER_KINDS["test_upper"]


def test_score_result_is_frozen() -> None:
    result = score_text("x", "x")
    with pytest.raises(ValidationError):
        result.correct = False  # type: ignore[misc]


def test_explain_runs_every_rule_and_ends_with_the_verdict() -> None:
    traces = explain_text("Μαρία ή Μαρίνα", "Μαρίνα")
    assert all(isinstance(t, RuleTrace) for t in traces)
    assert [t.rule for t in traces] == [
        "committed_span",
        "empty_response",
        "several_answers",
        "candidate_list",
        "range",
        "compound_duration",
        "boxed_alternatives",
        "alternatives",
        "answer_format",
        "form_demand",
        "echo",
        "exact",
        "regex",
        "yes_no",
        "ordinal",
        "containment",
        "number_words",
        "date",
        "clock_time",
        "transliteration",
        "token_coverage",
        "near_spelling",
        "name_form",
        "stem_coverage",
        "undecided",
        "verdict",
    ]
    by_rule = {t.rule: t for t in traces}
    assert by_rule["containment"].matched and "hedged" in by_rule["containment"].detail
    assert not by_rule["exact"].matched and not by_rule["verdict"].matched
    assert "incorrect by hedged" in by_rule["verdict"].detail


def test_explain_numeric_rules() -> None:
    traces = explain_text("Final answer: \\boxed{42}", "42", kind="numeric")
    assert [t.rule for t in traces][-6:] == [
        "numeric_boxed",
        "numeric_marker",
        "numeric_last",
        "number_words",
        "undecided",
        "verdict",
    ]
    assert traces[-1].matched


# --- Properties ----------------------------------------------------------------------------

_GREEK_WORDS = st.text(alphabet="αβγδεζηθικλμνξοπρστυφχψωάέήίόύώ", min_size=1, max_size=12)


@given(_GREEK_WORDS)
def test_a_word_always_matches_itself_in_every_kind(word: str) -> None:
    for kind in ("language", "exact"):
        assert score_text(word, word, kind=kind).correct
        assert score_text(word.upper(), word, kind=kind).correct


@given(st.integers(min_value=-(10**9), max_value=10**9))
def test_numbers_match_themselves_and_not_their_neighbours(value: int) -> None:
    assert score_text(f"\\boxed{{{value}}}", str(value), kind="numeric").correct
    assert score_text(f"Final answer: {value:,}", str(value), kind="numeric").correct
    assert not score_text(f"\\boxed{{{value + 1}}}", str(value), kind="numeric").correct
    if value != 0:  # "00" is zero
        assert not score_text(f"{value}0", str(value), kind="language").correct


@given(st.text(max_size=200))
def test_scoring_never_crashes(response: str) -> None:
    for kind in SCORER_KINDS:
        result = score_text(response, "Μαρίνα", kind=kind)
        assert isinstance(result.correct, bool) and result.method


@pytest.mark.parametrize(
    ("response", "answer", "correct"),
    [
        ("evikoos", "Ευβοϊκός", False),  # ευήκοος: the diaeresis keeps οϊ two vowels
        ("Evvoikos", "Ευβοϊκός", True),
        ("Απάντηση: Μαιου", "Μαΐου", True),
        ("Απάντηση: kaiki", "καΐκι", True),
        ("anchos", "άγχος", True),  # ISO 843: γχ -> nch
        ("sfinx", "σφίγξ", True),  # γξ -> nx
        ("Effimia", "Ευφημία", True),  # ευφ -> eff
        ("Απάντηση: Ifaistos", "Ηφαιστος", True),
    ],
)
def test_diaeresis_and_iso_843_forms(response: str, answer: str, correct: bool) -> None:
    assert score_text(response, answer).correct is correct


@pytest.mark.parametrize(
    ("response", "correct"),
    [
        # Working that a conclusion settles names the decoy only as an input.
        ("18:20 + 40 λεπτά + 10 λεπτά = 19:10", True),
        ("Ξεκινά 12/05 και κρατά τρεις μέρες, άρα η τελευταία μέρα είναι 14/05.", True),
        ("Αρχικά 07:30, με καθυστέρηση μιάμιση ώρα: 09:00", True),
        ("It starts at 18:20, so 19:10", True),
        # A decoy inside a parenthetical reason is a reason, not a second answer.
        ("19:10 (φεύγει 18:20)", True),
        # Without a conclusion, or with the decoy after it, the decoy is still offered.
        ("19:10 ή 18:20", False),
        ("19:10 (ή ίσως 18:20)", False),
        ("άρα 19:10 ή 18:20", False),
        ("19:10 = 18:20", False),
    ],
)
def test_a_conclusion_settles_working_that_names_a_decoy(response: str, correct: bool) -> None:
    verdict = score_text(
        response,
        "19:10",
        accepted_answers=["14/05", "09:00"],
        distractors=["18:20", "12/05", "07:30"],
    )
    assert verdict.correct is correct, verdict
