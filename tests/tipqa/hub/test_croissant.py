"""The Hub folder's `croissant.json`: the JSON-LD as written, then validated and read back with
`mlcroissant`, record set by record set, against the splits."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.croissant_support import AGREEMENT, AUDIT_FINGERPRINT, audit_file, records
from support.partition_fixtures import build_splits

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import write_json
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.steps import Step
from tipqa.hub.card import PAPER_TITLE
from tipqa.hub.croissant import CONFORMS_TO, CONTEXT, data_type, field, file_object
from tipqa.hub.folder import TrustFiles, build_hub_folder, config_specs
from tipqa.hub.settings import HubSettings

SETTINGS = HubSettings(repo_id="someone/tip-demo", license="cc-by-4.0", rows_per_file=8)
RECORD = StepRecord(Step.HUB_FOLDER, {"hub": {"rows_per_file": 8}})


def built(root: Path, trust: TrustFiles | None = None) -> tuple[RunLayout, dict[str, Any]]:
    """A two-pool build's Hub folder (the test split in 2 files, validation in 1) and its
    `croissant.json`."""
    run = build_splits(root, per_label=3)
    build_hub_folder(run, SETTINGS, RECORD, trust=trust)
    return run, json.loads((run.hub / "croissant.json").read_text())


def test_the_dataset_its_files_and_record_sets(tmp_path: Path) -> None:
    run, document = built(tmp_path)
    assert document["conformsTo"][0] == "http://mlcommons.org/croissant/1.1"
    assert document["name"] == "TIP-style knowledge-boundary QA benchmark"
    assert document["license"] == "cc-by-4.0" and document["inLanguage"] == "en"
    assert document["url"] == "https://huggingface.co/datasets/someone/tip-demo"
    assert document["version"] == f"0.1.0+{RECORD.fingerprint[:12]}"
    assert PAPER_TITLE in document["citeAs"] and document["citeAs"].startswith("@misc{")
    parquet = sorted(p.relative_to(run.hub).as_posix() for p in run.hub.rglob("*.parquet"))
    objects = [n for n in document["distribution"] if n["@type"] == "cr:FileObject"]
    assert sorted(n["contentUrl"] for n in objects) == parquet
    for node in objects:
        content = (run.hub / node["contentUrl"]).read_bytes()
        assert node["sha256"] == hashlib.sha256(content).hexdigest()
        assert node["contentSize"] == f"{len(content)} B"
        assert node["encodingFormat"] == "application/x-parquet"
    sets = {n["@id"]: n for n in document["recordSet"]}
    assert set(sets) == {f"{c}/{s}" for c in ("questions", "instances") for s in SPLITS}
    test = {f["name"]: f for f in sets["questions/test"]["field"]}
    assert test["id"]["source"]["fileSet"] == {"@id": "questions/test-parquet-files"}
    files = next(n for n in document["distribution"] if n["@id"] == "questions/test-parquet-files")
    assert files["includes"] == "questions/test-*.parquet"
    validation = sets["questions/validation"]["field"][0]["source"]
    assert validation["fileObject"] == {"@id": "questions/validation-00000-of-00001.parquet"}
    assert sets["questions/test"]["key"] == {"@id": "questions/test/id"}
    assert test["aliases"]["isArray"] is True and test["aliases"]["dataType"] == "sc:Text"
    assert test["total_matches"]["dataType"] == "sc:Integer"
    assert test["evidence_text"]["description"] == "the judged text"
    instances = {f["name"]: f["dataType"] for f in sets["instances/test"]["field"]}
    assert instances["score"] == "sc:Float" and instances["relevant"] == "sc:Boolean"
    schema = pq.read_schema(run.hub / "questions" / "test-00000-of-00002.parquet")
    assert list(test) == schema.names


SPLITS = ("train", "validation", "test")


def test_without_a_repository_or_license_the_keys_are_left_out(tmp_path: Path) -> None:
    run = build_splits(tmp_path, train=False, dev_counts={"answerable": 2})
    build_hub_folder(run, HubSettings(), RECORD)
    document = json.loads((run.hub / "croissant.json").read_text())
    assert not {"url", "license"} & set(document)
    assert [n["@id"] for n in document["recordSet"]] == ["questions/test", "instances/test"]


def test_a_column_it_cannot_type_is_an_input_error() -> None:
    with pytest.raises(InputError, match="column 'when' has type timestamp"):
        data_type(pa.timestamp("s"), "when")
    column = pa.schema([("seen", pa.list_(pa.struct([("at", pa.date32())])))]).field("seen")
    with pytest.raises(InputError, match=r"column 'seen\.at' has type date32"):
        field("c/test", column, {}, None)


def test_the_measured_figures_reach_the_file(tmp_path: Path) -> None:
    run = RunLayout(tmp_path)
    write_json(run.pool("dev").audit, audit_file(judged=True))
    write_json(tmp_path / "agreement.json", AGREEMENT)
    trust = TrustFiles({"dev": AUDIT_FINGERPRINT}, tmp_path / "agreement.json")
    _, document = built(tmp_path, trust)
    analysis = "\n".join(document["rai:dataAnnotationAnalysis"])
    assert "evidence found for 2 (20.0%, exact 95% CI 2.5% to 55.6%)" in analysis
    assert "10 re-judged by the second judge, 2 disputed" in analysis
    assert "The judge agreed with people on 82.8%" in analysis
    write_json(run.pool("dev").audit, {**audit_file(), "fingerprint": "another"})
    with pytest.raises(InputError, match="an audit made with other settings"):
        build_hub_folder(run, SETTINGS, RECORD, trust=trust)


@pytest.mark.needs("mlcroissant")
def test_mlcroissant_validates_it_and_reads_every_split(tmp_path: Path) -> None:
    import mlcroissant

    write_json(RunLayout(tmp_path).pool("dev").audit, audit_file(judged=True))
    trust = TrustFiles({"dev": AUDIT_FINGERPRINT})
    run, document = built(tmp_path, trust)
    dataset = mlcroissant.Dataset(jsonld=run.hub / "croissant.json")
    assert not dataset.metadata.ctx.issues.errors
    assert dataset.metadata.ctx.is_v1_1()
    metadata = dataset.metadata
    assert metadata.data_annotation_analysis == document["rai:dataAnnotationAnalysis"]
    assert metadata.data_annotation_protocol == document["rai:dataAnnotationProtocol"]
    assert metadata.machine_annotation_tools == document["rai:machineAnnotationTools"]
    assert metadata.data_limitations == document["rai:dataLimitations"]
    splits = SplitsLayout(run.splits)
    read = 0
    for spec in config_specs()[:2]:
        for split in SPLITS:
            expected = [dict(row) for row in spec.rows(splits, split)]
            assert records(dataset, f"{spec.name}/{split}") == expected
            read += len(expected)
    assert read == sum(len(records(dataset, n["@id"])) for n in document["recordSet"])


@pytest.mark.needs("mlcroissant")
def test_a_list_of_records_column_is_read_back(tmp_path: Path) -> None:
    import mlcroissant

    member = pa.struct([("stage", pa.string()), ("step", pa.int64()), ("exact", pa.bool_())])
    schema = pa.schema([("question_id", pa.string()), ("relevant", pa.list_(member))])
    rows = [
        {"question_id": "q1", "relevant": [{"stage": "token", "step": 3, "exact": True}]},
        {"question_id": "q2", "relevant": []},
    ]
    name = "seen/test-00000-of-00001.parquet"
    (tmp_path / "seen").mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / name)
    source = {"fileObject": {"@id": name}}
    document = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": "nested",
        "distribution": [file_object(tmp_path, name)],
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": "seen/test",
                "name": "seen/test",
                "field": [field("seen/test", column, source, None) for column in schema],
            }
        ],
    }
    write_json(tmp_path / "croissant.json", document)
    dataset = mlcroissant.Dataset(jsonld=tmp_path / "croissant.json")
    read = records(dataset, "seen/test")
    assert read[1] == {"question_id": "q2", "relevant": []}
    assert read[0]["relevant"] == [
        {
            "seen/test/relevant/stage": "token",
            "seen/test/relevant/step": 3,
            "seen/test/relevant/exact": True,
        }
    ]
