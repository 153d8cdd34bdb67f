"""Judge windows (appendix A.2): minimal paragraph runs, the word limit, the fallbacks."""

from __future__ import annotations

from tipqa.config import read_config
from tipqa.core.records import Document
from tipqa.llm.judges.vllm import max_window_words
from tipqa.stages.windows import (
    DEFAULT_MAX_WORDS,
    WindowSettings,
    judge_windows,
    minimal_spans,
    split_words,
)

KW = "Kellan Dusk"
ALIAS = "Varnholt"


def doc(*paragraphs: str) -> Document:
    return Document("d1", "\n\n".join(paragraphs))


def spans(windows) -> list[tuple[int, int]]:
    return [(w.first_paragraph, w.last_paragraph) for w in windows]


def test_minimal_spans_shrink_from_the_left_without_overlap() -> None:
    present = [{0}, {0}, {1}, set(), {0, 1}, {1}, {0}]
    assert minimal_spans(present, 2) == [(1, 2), (4, 4), (5, 6)]


def test_minimal_spans_skip_empty_paragraphs_when_shrinking() -> None:
    assert minimal_spans([set(), {0}, set(), set(), {1}, set()], 2) == [(1, 4)]


def test_minimal_spans_none_when_a_target_is_missing() -> None:
    assert minimal_spans([{0}, {1}, {0, 1}], 3) == []
    assert minimal_spans([], 1) == []


def test_several_minimal_windows_over_paragraphs() -> None:
    document = doc(
        f"{KW} appears first.",
        f"{KW} appears again.",
        f"A road leads to {ALIAS}.",
        "Filler about barley and apples.",
        f"{KW} lived in {ALIAS}.",
        f"{ALIAS} has a harbour.",
        f"Letters by {KW} survive.",
    )
    windows, truncated = judge_windows(document, [KW], [ALIAS])
    assert not truncated
    assert spans(windows) == [(1, 2), (4, 4), (5, 6)]
    assert [w.index for w in windows] == [0, 1, 2]
    assert windows[0].text == f"{KW} appears again.\n\nA road leads to {ALIAS}."
    assert all(w.doc_id == "d1" for w in windows)


def test_every_keyword_and_any_alias_are_needed() -> None:
    document = doc(
        "The Glass Orchard is a novel.",
        "Orla Venn wrote it.",
        "Its first edition appeared in Varnholt.",
        "Venn lived by the sea.",
    )
    windows, _ = judge_windows(document, ["The Glass Orchard", "Varnholt"], ["Orla Venn", "Venn"])
    assert spans(windows) == [(0, 2)]


def test_keywords_match_as_phrases_of_tokens() -> None:
    document = doc("kellan, DUSK! was here", "prime time minister", f"{ALIAS} town", "end")
    windows, _ = judge_windows(document, [KW], [ALIAS])
    assert spans(windows) == [(0, 2)]
    windows, _ = judge_windows(document, ["Prime Minister"], [ALIAS])
    assert spans(windows) == [(0, 3)]  # no phrase match: the whole document


def test_long_window_split_left_to_right_under_the_word_limit() -> None:
    words = [f"w{i}" for i in range(10)]
    document = doc(f"{KW} " + " ".join(words), f"{ALIAS} end")
    windows, truncated = judge_windows(document, [KW], [ALIAS], WindowSettings(max_words=4))
    assert not truncated
    assert [w.text for w in windows] == [
        "Kellan Dusk w0 w1", "w2 w3 w4 w5", "w6 w7 w8 w9", "Varnholt end",
    ]  # fmt: skip
    assert all(len(w.text.split()) <= 4 for w in windows)
    assert spans(windows) == [(0, 1)] * 4
    assert [w.index for w in windows] == [0, 1, 2, 3]


def test_split_words() -> None:
    assert split_words("a b c", 3) == ["a b c"]
    assert split_words("a  b\nc d e f g", 3) == ["a b c", "d e f", "g"]


def test_fallback_to_the_whole_document_when_nothing_covers_everything() -> None:
    document = doc("Letters of Kellan", f"Dusk was born in {ALIAS}.", "Filler text here.")
    windows, truncated = judge_windows(document, [KW], [ALIAS], WindowSettings(max_words=5))
    assert not truncated
    assert spans(windows) == [(0, 2)] * 3
    assert " ".join(w.text for w in windows).split() == document.text.split()


def test_max_windows_truncates_and_says_so() -> None:
    document = doc(*[f"{KW} in {ALIAS} number {i}." for i in range(5)])
    windows, truncated = judge_windows(document, [KW], [ALIAS], WindowSettings(max_windows=3))
    assert truncated
    assert spans(windows) == [(0, 0), (1, 1), (2, 2)]
    windows, truncated = judge_windows(document, [KW], [ALIAS], WindowSettings(max_windows=5))
    assert not truncated and len(windows) == 5


def test_truncation_counts_pieces_of_split_windows() -> None:
    document = doc(f"{KW} " + "word " * 20 + ALIAS)
    windows, truncated = judge_windows(
        document, [KW], [ALIAS], WindowSettings(max_words=5, max_windows=2)
    )
    assert truncated and len(windows) == 2


def test_no_keywords_windows_around_the_alias() -> None:
    document = doc("Filler one.", f"{ALIAS} is a city.", "Filler two.", f"Trade in {ALIAS}.")
    windows, _ = judge_windows(document, [], [ALIAS])
    assert spans(windows) == [(1, 1), (3, 3)]


def test_no_keywords_and_no_aliases_judge_the_whole_document() -> None:
    document = doc("One.", "Two.")
    windows, truncated = judge_windows(document, [], [])
    assert spans(windows) == [(0, 1)] and not truncated
    windows, _ = judge_windows(document, ["--"], ["..."])
    assert spans(windows) == [(0, 1)]


def test_empty_document_has_no_windows() -> None:
    assert judge_windows(Document("e", ""), [KW], [ALIAS]) == ([], False)


def test_windows_record_their_character_offsets_in_the_document() -> None:
    text = "  Intro line.\n\n\nKellan Dusk lived\n  in Varnholt.  \n\nOther.\n\n"
    text += "Varnholt, Kellan Dusk."
    windows, _ = judge_windows(Document("d1", text), [KW], [ALIAS])
    assert [(w.start, w.end) for w in windows] == [(16, 48), (60, 82)]
    assert [text[w.start : w.end] for w in windows] == [
        "Kellan Dusk lived\n  in Varnholt.",
        "Varnholt, Kellan Dusk.",
    ]


def test_pieces_of_a_long_window_have_the_offsets_of_their_words() -> None:
    text = "Kellan  Dusk one two\nthree Varnholt four"
    windows, _ = judge_windows(Document("d1", text), [KW], [ALIAS], WindowSettings(max_words=3))
    assert [w.text for w in windows] == ["Kellan Dusk one", "two three Varnholt", "four"]
    assert [text[w.start : w.end] for w in windows] == [
        "Kellan  Dusk one",
        "two\nthree Varnholt",
        "four",
    ]


def test_the_step_s_window_limits_from_max_words() -> None:
    built = read_config({"judge": {"max_words": "100", "max_windows": "3"}})
    assert built.judging.resolve_for(built.judge.settings) == WindowSettings(100, 3)
    vllm = read_config({"judge": {"backend": "vllm", "max_words": "100", "max_model_len": "4096"}})
    assert vllm.judging.resolve_for(vllm.judge.settings).max_words == 100


def test_the_step_s_window_limits_from_the_judge_context() -> None:
    rules = read_config({"judge": {"max_windows": "3"}})
    assert rules.judging.resolve_for(rules.judge.settings).max_words == DEFAULT_MAX_WORDS
    vllm = read_config({"judge": {"backend": "vllm", "model": "m", "max_model_len": "4096"}})
    assert vllm.judging.resolve_for(vllm.judge.settings).max_words == max_window_words(4096)
