"""The embedded FAISS vector index: round trip, idempotence, recall, atomic finish."""

from __future__ import annotations

import numpy as np
import pytest
from support.vector_support import clustered, make_chunks, unit

from tipqa.core.errors import ConfigError, InputError
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.vector_index import VECTOR_INDEXES
from tipqa.indexes.vector_index.faiss import MANIFEST, FaissSettings, FaissVectorIndex

DIM = 16


@pytest.mark.parametrize("kind", ["flat", "hnsw", "pq-rerank"])
def test_round_trip(tmp_path, kind: str) -> None:
    chunks = make_chunks(50)
    vectors = clustered(50, DIM, 5, seed=1)
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind=kind)
    index.add(chunks[:30], vectors[:30])
    index.add(chunks[30:], vectors[30:])
    counts = index.finish()
    assert counts["chunks"] == 50
    assert counts["chunks_added"] == 50
    before = index.search(vectors[:3], 5)
    index.close()

    reopened = FaissVectorIndex.at(tmp_path / "vi", DIM, kind=kind)
    assert reopened.count() == 50
    after = reopened.search(vectors[:3], 5)
    assert after == before
    for i, hits in enumerate(after):
        assert hits[0].chunk_id == chunks[i].id
        assert hits[0].doc_id == chunks[i].doc_id
        assert hits[0].text == chunks[i].text
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_scores_are_cosine_similarities(tmp_path) -> None:
    vectors = clustered(20, DIM, 3, seed=2) * 5.0
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")
    index.add(make_chunks(20), vectors)
    query = clustered(1, DIM, 3, seed=3)
    hits = index.search(query, 20)[0]
    expected = unit(vectors) @ unit(query)[0]
    by_id = {c.id: i for i, c in enumerate(make_chunks(20))}
    for hit in hits:
        assert hit.score == pytest.approx(float(expected[by_id[hit.chunk_id]]), abs=1e-5)
    assert hits[0].chunk_id == make_chunks(20)[int(np.argmax(expected))].id


def test_add_is_idempotent_by_chunk_id(tmp_path) -> None:
    chunks = make_chunks(10)
    vectors = clustered(10, DIM, 2, seed=4)
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")
    index.add(chunks, vectors)
    index.add(chunks[5:], vectors[5:])
    index.add([chunks[0], chunks[0]], vectors[:2])
    counts = index.finish()
    assert index.count() == 10
    assert counts["chunks_added"] == 10
    assert counts["chunks_duplicate"] == 7
    assert index.present_ids(["d0#0", "d9#9", "nope"]) == {"d0#0"}

    again = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")
    again.add(chunks, vectors)
    assert again.count() == 10
    assert again.finish()["chunks_duplicate"] == 10


def test_hnsw_recall_against_flat(tmp_path) -> None:
    vectors = clustered(3000, 32, 30, seed=5)
    queries = clustered(50, 32, 30, seed=6)
    chunks = make_chunks(3000)
    recalls = {}
    results = {}
    for kind in ("flat", "hnsw"):
        index = FaissVectorIndex.at(tmp_path / kind, 32, kind=kind, hnsw_m=16, ef_search=64)
        index.add(chunks, vectors)
        index.finish()
        results[kind] = [{h.chunk_id for h in hits} for hits in index.search(queries, 10)]
    exact = unit(vectors) @ unit(queries).T
    truth = [{chunks[i].id for i in np.argsort(-exact[:, q])[:10]} for q in range(50)]
    for kind, found in results.items():
        recalls[kind] = np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)])
    assert recalls["flat"] == 1.0
    assert recalls["hnsw"] >= 0.9, recalls


def test_k_larger_than_the_index_and_empty_index(tmp_path) -> None:
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="hnsw")
    query = clustered(2, DIM, 1, seed=7)
    assert index.search(query, 5) == [[], []]
    index.add(make_chunks(3), clustered(3, DIM, 1, seed=8))
    hits = index.search(query, 10)
    assert [len(h) for h in hits] == [3, 3]
    assert index.search(query[0], 0) == [[]]


def test_empty_build_finishes_and_reopens(tmp_path) -> None:
    index = FaissVectorIndex.at(tmp_path / "vi", DIM)
    assert index.finish()["chunks"] == 0
    assert (tmp_path / "vi" / MANIFEST).exists()
    assert FaissVectorIndex.at(tmp_path / "vi", DIM).count() == 0


def test_unfinished_additions_are_dropped_on_reopen(tmp_path) -> None:
    chunks = make_chunks(20)
    vectors = clustered(20, DIM, 2, seed=9)
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")
    index.add(chunks[:10], vectors[:10])
    index.finish()
    index.add(chunks[10:], vectors[10:])
    index.close()

    reopened = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")
    assert reopened.count() == 10
    assert reopened.present_ids(c.id for c in chunks[10:]) == set()
    reopened.add(chunks, vectors)
    assert reopened.finish()["chunks_added"] == 10
    assert reopened.count() == 20
    assert len(list((tmp_path / "vi").glob("index-*.faiss"))) == 1
    assert not list((tmp_path / "vi").glob(".*.tmp"))


def test_unfinished_first_build_starts_empty(tmp_path) -> None:
    index = FaissVectorIndex.at(tmp_path / "vi", DIM)
    index.add(make_chunks(5), clustered(5, DIM, 1, seed=10))
    index.close()
    assert FaissVectorIndex.at(tmp_path / "vi", DIM).count() == 0


def test_reopening_with_other_parameters_is_an_error(tmp_path) -> None:
    FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat").finish()
    with pytest.raises(ConfigError, match="kind"):
        FaissVectorIndex.at(tmp_path / "vi", DIM, kind="hnsw")
    with pytest.raises(ConfigError, match="dimension"):
        FaissVectorIndex.at(tmp_path / "vi", DIM + 1, kind="flat")


def test_corrupt_manifest_names_the_file(tmp_path) -> None:
    (tmp_path / "vi").mkdir()
    (tmp_path / "vi" / MANIFEST).write_text("{not json")
    with pytest.raises(InputError, match=MANIFEST):
        FaissVectorIndex.at(tmp_path / "vi", DIM)


def test_bad_vectors(tmp_path) -> None:
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")
    with pytest.raises(InputError, match="3 chunks but 2 vectors"):
        index.add(make_chunks(3), clustered(2, DIM, 1, seed=11))
    with pytest.raises(InputError, match="dimension"):
        index.add(make_chunks(2), np.ones((2, DIM + 1), dtype=np.float32))
    with pytest.raises(InputError, match="dimension"):
        index.search(np.ones((1, 3), dtype=np.float32), 1)
    vectors = clustered(3, DIM, 1, seed=12)
    vectors[1, 0] = np.nan
    index.add(make_chunks(3), vectors)
    counts = index.finish()
    assert counts["vectors_nonfinite"] == 1
    assert index.present_ids(c.id for c in make_chunks(3)) == {"d0#0", "d1#0"}


def test_unknown_kind_and_similarity(tmp_path) -> None:
    with pytest.raises(ConfigError, match="expected one of flat, hnsw"):
        FaissVectorIndex.at(tmp_path / "vi", DIM, kind="ivf")
    with pytest.raises(ConfigError, match="similarity"):
        FaissVectorIndex.at(tmp_path / "vi", DIM, similarity="manhattan")


@pytest.mark.parametrize("kind", ["flat", "hnsw", "pq-rerank"])
def test_l2_and_dot_product(tmp_path, kind: str) -> None:
    vectors = np.eye(DIM, dtype=np.float32) * np.arange(1, DIM + 1, dtype=np.float32)[:, None]
    chunks = make_chunks(DIM)
    query = np.zeros((1, DIM), dtype=np.float32)
    query[0, 3] = 4.0
    l2 = FaissVectorIndex.at(tmp_path / f"l2{kind}", DIM, similarity="l2_norm", kind=kind)
    l2.add(chunks, vectors)
    best = l2.search(query, 2)[0]
    assert best[0].chunk_id == chunks[3].id
    assert best[0].score == pytest.approx(1.0)
    assert best[0].score > best[1].score
    dot = FaissVectorIndex.at(tmp_path / f"dot{kind}", DIM, similarity="dot_product", kind=kind)
    dot.add(chunks, vectors)
    assert dot.search(query, 1)[0][0].score == pytest.approx(16.0)


def test_registry_creates_it(tmp_path) -> None:
    settings = VECTOR_INDEXES.parse("faiss", "vector_index", {"kind": "flat"})
    place = IndexPlace(tmp_path / "vi")
    index = VECTOR_INDEXES.create("faiss", settings, place=place, dimension=DIM)
    assert isinstance(index, FaissVectorIndex)


def test_damaged_index_names_the_file(tmp_path) -> None:
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")
    index.add(make_chunks(4), clustered(4, DIM, 1, seed=13))
    index.finish()
    index.close()
    (tmp_path / "vi" / "chunks.sqlite3").unlink()
    with pytest.raises(InputError, match=r"chunks\.sqlite3.*0 chunk rows for 4 vectors"):
        FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")
    for faiss_file in (tmp_path / "vi").glob("index-*.faiss"):
        faiss_file.unlink()
    with pytest.raises(InputError, match="faiss file named by the manifest is missing"):
        FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat")


def test_flat_index_ignores_hnsw_parameters_on_reopen(tmp_path) -> None:
    FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat", hnsw_m=8).finish()
    assert FaissVectorIndex.at(tmp_path / "vi", DIM, kind="flat").count() == 0
    FaissVectorIndex.at(tmp_path / "hn", DIM, kind="hnsw", hnsw_m=8).finish()
    with pytest.raises(ConfigError, match="hnsw_m"):
        FaissVectorIndex.at(tmp_path / "hn", DIM, kind="hnsw")


def test_settings_defaults_and_identity() -> None:
    settings = FaissSettings()
    assert (settings.kind, settings.pq_dims, settings.rerank) == ("pq-rerank", 2, 30)
    assert (settings.hnsw_m, settings.ef_construction, settings.ef_search) == (64, 400, 512)
    assert "threads" not in settings.identity()
    assert FaissSettings(threads=1).identity() == settings.identity()
    assert FaissSettings(rerank=10).build_identity() == settings.build_identity()
    assert FaissSettings(rerank=10).identity() != settings.identity()
    assert FaissSettings(pq_dims=4).build_identity() != settings.build_identity()
    hnsw = FaissSettings(kind="hnsw")
    assert FaissSettings(kind="hnsw", ef_search=64).identity() != hnsw.identity()
    assert FaissSettings(kind="hnsw", ef_search=64).build_identity() == hnsw.build_identity()
    assert FaissSettings(kind="hnsw", hnsw_m=32).build_identity() != hnsw.build_identity()
    assert hnsw.build_identity() != settings.build_identity()


@pytest.mark.parametrize(
    ("kind", "unused"),
    [
        ("flat", {"hnsw_m": 32, "ef_construction": 40, "ef_search": 64, "pq_dims": 4, "rerank": 9}),
        ("hnsw", {"pq_dims": 4, "rerank": 9}),
        ("pq-rerank", {"hnsw_m": 32, "ef_construction": 40, "ef_search": 64}),
    ],
)
def test_settings_of_other_kinds_are_not_identity(kind: str, unused: dict[str, int]) -> None:
    plain = FaissSettings(kind=kind)  # type: ignore[arg-type]
    changed = FaissSettings(kind=kind, **unused)  # type: ignore[arg-type]
    assert changed.identity() == plain.identity()
    assert set(unused).isdisjoint(plain.identity())
    assert plain.identity()["kind"] == kind


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kind": "ivf"}, "expected one of flat, hnsw"),
        ({"hnsw_m": 1}, "hnsw_m"),
        ({"ef_search": 0}, "ef_search"),
        ({"ef_construction": 0}, "ef_construction"),
        ({"threads": -1}, "threads"),
        ({"pq_dims": 0}, "pq_dims"),
        ({"rerank": 0}, "rerank"),
    ],
)
def test_bad_settings_are_config_errors(options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FaissSettings(**options)


def test_registry_parses_the_section() -> None:
    section = {"kind": "hnsw", "hnsw_m": "8", "ef_construction": "40", "ef_search": "32"}
    settings = VECTOR_INDEXES.parse("faiss", "vector_index", {**section, "threads": "1"})
    expected = FaissSettings(kind="hnsw", hnsw_m=8, ef_construction=40, ef_search=32, threads=1)
    assert settings == expected


def test_threads_knob_sets_the_openmp_threads(tmp_path) -> None:
    import faiss

    before = faiss.omp_get_max_threads()
    try:
        FaissVectorIndex.at(tmp_path / "vi", DIM, threads=1)
        assert faiss.omp_get_max_threads() == 1
    finally:
        faiss.omp_set_num_threads(before)


def test_ef_search_may_change_on_reopen(tmp_path) -> None:
    vectors = clustered(200, DIM, 4, seed=3)
    index = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="hnsw", hnsw_m=8)
    index.add(make_chunks(200), vectors)
    index.finish()
    index.close()
    wider = FaissVectorIndex.at(tmp_path / "vi", DIM, kind="hnsw", hnsw_m=8, ef_search=512)
    assert wider.count() == 200
    assert [h.chunk_id for h in wider.search(vectors[:1], 1)[0]] == ["d0#0"]
