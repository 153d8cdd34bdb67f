"""Refusal detection: the system's signal, boxed answers, empty and phrase matches, embeddings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipqa.core.errors import ConfigError
from tipqa.evaluate.refusal import (
    DEFAULT_THRESHOLD,
    RefusalDetector,
    RefusalSettings,
    boxed_reading,
    last_boxed,
    load_phrases,
)

# Written for these tests; none is in the benchmark that chose the threshold, none equals a
# shipped phrase after normalisation, so the embedding alone decides.
REFUSALS = [
    "I've got no idea, honestly.",
    "Sorry, I can't answer that one.",
    "I'm not really sure about that.",
    "That I do not know.",
    "I have no knowledge of this.",
    "I'm not in a position to answer.",
    "No idea, sorry!",
    "I do not know the answer to this question.",
    "I can't tell you, I don't know.",
    "Unfortunately, I'm unable to answer.",
    "I don't know that one.",
    "I'm not sure I know.",
    "I have no answer for you.",
    "Hmm, I really don't know.",
    "I am afraid I cannot answer this.",
]
ANSWERS = [
    "Madrid",
    "The Amazon",
    "It was Winston Churchill.",
    "1066",
    "I think it's Canberra.",
    "Probably the Rhine.",
    "Albert Einstein",
    "The answer is Tokyo.",
    "Sir Isaac Newton",
    "Mount Fuji, in Japan.",
    "The Titanic",
    "Penguins",
    "Maybe Beethoven.",
    "It's Neptune.",
    "Vincent van Gogh",
]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("so the answer is \\boxed{Paris}.", "Paris"),
        ("\\boxed{A} then \\boxed{B}", "B"),
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{Paris} and an open \\boxed{Rome", None),
        ("\\boxed{a \\boxed{b}}", "b"),
        ("no box here", None),
        ("\\boxed{}", ""),
    ],
)
def test_last_balanced_box(text: str, content: str | None) -> None:
    assert last_boxed(text) == content


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Thinking... \\boxed{I don't know}", "boxed_model_uncertain"),
        ("\\boxed{\\text{I don’t know.}}", "boxed_model_uncertain"),
        ("\\boxed{<MODEL_UNCERTAIN>}", "boxed_model_uncertain"),
        ("\\boxed{ <data_uncertain> }", "boxed_data_uncertain"),
        ("\\boxed{Paris}", None),
    ],
)
def test_boxed_refusal_kinds(text: str, kind: str | None) -> None:
    reading = boxed_reading(text)
    assert reading is not None
    assert reading.kind == kind
    assert reading.refused == (kind is not None)


def test_rules_in_order(rules_detector: RefusalDetector) -> None:
    texts = [
        "Paris",
        "Paris",
        "I don't know",
        "",
        "I DO NOT KNOW!",
        "So: \\boxed{Paris}",
        "\\boxed{<DATA_UNCERTAIN>}",
        "\\boxed{I'm not sure}",
    ]
    signals = [True, False, False, None, None, None, None, None]
    readings = rules_detector.read(texts, signals)
    assert [(r.refused, r.kind) for r in readings] == [
        (True, "explicit"),
        (False, None),  # the system said it answered
        (False, None),
        (True, "empty"),
        (True, "phrase"),
        (False, None),
        (True, "boxed_data_uncertain"),
        (True, "phrase"),  # a box's content is read on by the phrase rule
    ]
    assert readings[5].answer == "Paris"
    assert all(r.similarity is None for r in readings)


def test_boxes_can_be_left_unread() -> None:
    detector = RefusalDetector(RefusalSettings(embedding=False, boxed=False))
    (reading,) = detector.read(["\\boxed{I don't know}"], [None])
    assert not reading.refused and reading.answer == "\\boxed{I don't know}"


def test_phrase_files(tmp_path: Path) -> None:
    shipped = load_phrases()
    assert "I don't know" in shipped and all(not p.startswith("#") for p in shipped)
    own = tmp_path / "phrases.txt"
    own.write_text("# mine\n\nNo comment\n")
    detector = RefusalDetector(RefusalSettings(phrases=str(own), embedding=False))
    assert [r.refused for r in detector.read(["no comment.", "I don't know"], [None, None])] == [
        True,
        False,
    ]
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(ConfigError, match="has no phrases"):
        load_phrases(str(tmp_path / "empty.txt"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_phrases(str(tmp_path / "absent.txt"))


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="needs an embedder"):
        RefusalDetector(RefusalSettings())
    with pytest.raises(ConfigError, match=r"cosine in \[-1, 1\]"):
        RefusalSettings(threshold=1.5)


@pytest.fixture(scope="module")
def minilm_detector() -> RefusalDetector:
    from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder

    return RefusalDetector(RefusalSettings(), SentenceTransformerEmbedder.of())


@pytest.mark.slow
def test_paraphrases_through_the_bundled_embedder(minilm_detector: RefusalDetector) -> None:
    texts = REFUSALS + ANSWERS
    readings = minilm_detector.read(texts, [None] * len(texts))
    missed = [t for t, r in zip(texts, readings, strict=True) if r.refused != (t in REFUSALS)]
    assert missed == []
    assert {r.kind for r in readings[: len(REFUSALS)]} == {"embedding"}
    similarities = [r.similarity for r in readings if r.similarity is not None]
    assert len(similarities) == len(texts)
    lowest_refusal = min(similarities[: len(REFUSALS)])
    highest_answer = max(similarities[len(REFUSALS) :])
    assert highest_answer < DEFAULT_THRESHOLD < lowest_refusal


@pytest.mark.slow
def test_threshold_moves_the_line(minilm_detector: RefusalDetector) -> None:
    strict = RefusalDetector(RefusalSettings(threshold=0.99), minilm_detector.embedder)
    loose = RefusalDetector(RefusalSettings(threshold=-1.0), minilm_detector.embedder)
    assert not any(r.refused for r in strict.read(REFUSALS, [None] * len(REFUSALS)))
    assert all(r.refused for r in loose.read(ANSWERS, [None] * len(ANSWERS)))
