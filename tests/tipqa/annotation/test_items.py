"""Item ids and annotator names."""

from __future__ import annotations

from tipqa.annotation.items import AnnotationItem, annotator_names, item_id


def test_item_ids_are_stable_and_distinct() -> None:
    first = item_id("q1", "token", "d1@w0")
    assert first == item_id("q1", "token", "d1@w0") == "it-" + first[3:]
    assert len(first) == 15
    assert len({first, item_id("q1", "vector", "d1@w0"), item_id("q2", "token", "d1@w0")}) == 3


def test_annotator_names_sort_in_order() -> None:
    assert annotator_names(3) == ["annotator-01", "annotator-02", "annotator-03"]
    names = annotator_names(120)
    assert names == sorted(names) and names[0] == "annotator-001"


def test_items_round_trip_through_their_dict_form() -> None:
    item = AnnotationItem(
        "q",
        "Q?",
        "A",
        ["A"],
        ["k"],
        "vector",
        "d",
        "c",
        "it-1",
        "yes",
        "t",
        "answerable",
        True,
        "text",
        ["annotator-01", "annotator-02"],
    )
    assert AnnotationItem.from_dict(item.to_dict()) == item
    assert item.stratum == "answerable/vector"
