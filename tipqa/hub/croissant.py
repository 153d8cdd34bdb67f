"""The folder's Croissant 1.1 metadata (`croissant.json`), with the Responsible-AI fields.

One `cr:FileObject` per Parquet file (its path relative to the folder, size and SHA-256), and one
`cr:RecordSet` per configuration and split (`questions/test`), whose fields are the columns of
its Parquet files, typed from their Arrow schema. A split of one file is read from that file
(its SHA-256 is checked when it is read); a split of several files from a `cr:FileSet` of its
files (`questions/test-*.parquet`). The Responsible-AI fields (`rai:`) are written by
`tipqa.hub.rai` from what the build recorded. Paths are relative, so the file is read from the
folder itself or a download of the published repository:
`mlcroissant.Dataset(jsonld="hub/croissant.json").records("questions/test")`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import content_hash
from tipqa.hub.card import DEFAULT_NAME, FIELDS, TAGS, bibtex, card_description
from tipqa.hub.folder_stats import HubFolderStats
from tipqa.hub.rai import Measured, rai_fields

CROISSANT_FILE = "croissant.json"
CROISSANT_WRITER = 1
"""Raised whenever the same build would give another `croissant.json`: it is in the Hub
folder's fingerprint, so a finished folder is built again."""
CONFORMS_TO = ["http://mlcommons.org/croissant/1.1", "http://mlcommons.org/croissant/RAI/1.0"]
PARQUET = "application/x-parquet"
HUB = "https://huggingface.co"
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileObject": "cr:fileObject",
    "fileProperty": "cr:fileProperty",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sdVersion": "cr:sdVersion",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
KEYS = {"questions": "id"}
"""The column that identifies a record, by configuration (unique within a split)."""


def data_type(arrow_type: Any, column: str) -> str:
    """The schema.org type of an Arrow scalar type (a column's, or a list column's items)."""
    import pyarrow as pa

    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "sc:Text"
    if pa.types.is_boolean(arrow_type):
        return "sc:Boolean"
    if pa.types.is_integer(arrow_type):
        return "sc:Integer"
    if pa.types.is_floating(arrow_type):
        return "sc:Float"
    raise InputError(f"column {column!r} has type {arrow_type}, which croissant.json cannot type")


def field(record_set: str, column: Any, source: dict[str, Any], meaning: str | None) -> dict:
    """The `cr:Field` of one Parquet column (a list column is an array of its items' type;
    a list of structs an array of records, a sub-field per struct field)."""
    import pyarrow as pa

    node: dict[str, Any] = {"@type": "cr:Field", "@id": f"{record_set}/{column.name}"}
    node["name"] = column.name
    if meaning:
        node["description"] = meaning
    extract = {**source, "extract": {"column": column.name}}
    arrow_type = column.type
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        node["isArray"] = True
        node["arrayShape"] = "-1"
        arrow_type = arrow_type.value_type
    if pa.types.is_struct(arrow_type):
        node["subField"] = [
            {
                "@type": "cr:Field",
                "@id": f"{node['@id']}/{member.name}",
                "name": member.name,
                "dataType": data_type(member.type, f"{column.name}.{member.name}"),
                "source": {**extract, "transform": {"jsonPath": member.name}},
            }
            for member in arrow_type
        ]
        return node
    node["dataType"] = data_type(arrow_type, column.name)
    node["source"] = extract
    return node


def file_object(folder: Path, name: str) -> dict[str, Any]:
    """A Parquet file of the folder as a `cr:FileObject` (its path is its id)."""
    path = folder / name
    return {
        "@type": "cr:FileObject",
        "@id": name,
        "name": name,
        "contentUrl": name,
        "encodingFormat": PARQUET,
        "contentSize": f"{path.stat().st_size} B",
        "sha256": content_hash(path),
    }


def split_nodes(
    folder: Path, config: str, split: str, files: list[str], rows: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The distribution nodes of one configuration's split and its record set."""
    import pyarrow.parquet as pq

    nodes = [file_object(folder, name) for name in files]
    name = f"{config}/{split}"
    if len(files) == 1:
        source: dict[str, Any] = {"fileObject": {"@id": files[0]}}
    else:
        files_id = f"{name}-parquet-files"
        nodes.append(
            {
                "@type": "cr:FileSet",
                "@id": files_id,
                "name": files_id,
                "encodingFormat": PARQUET,
                "includes": f"{name}-*.parquet",
            }
        )
        source = {"fileSet": {"@id": files_id}}
    meanings = dict(FIELDS.get(config, []))
    schema = pq.read_schema(folder / files[0])
    record_set: dict[str, Any] = {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": f"The {split} split of the `{config}` configuration: {rows:,} rows.",
        "field": [field(name, column, source, meanings.get(column.name)) for column in schema],
    }
    if config in KEYS:
        record_set["key"] = {"@id": f"{name}/{KEYS[config]}"}
    return nodes, record_set


def croissant(
    folder: Path,
    built: HubFolderStats,
    info: dict[str, Any],
    card: dict[str, Any],
    version: str,
    measured: Measured,
) -> dict[str, Any]:
    """The JSON-LD of the folder: the dataset, its files, its record sets, the RAI fields."""
    distribution: list[dict[str, Any]] = []
    record_sets: list[dict[str, Any]] = []
    for config, splits in built.files.items():
        for split, files in splits.items():
            nodes, record_set = split_nodes(folder, config, split, files, built.rows[config][split])
            distribution += nodes
            record_sets.append(record_set)
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": card.get("pretty_name") or DEFAULT_NAME,
        "description": card_description(list(built.files)),
        "version": version,
        "citeAs": bibtex(),
        "keywords": list(TAGS),
    }
    if card.get("language"):
        document["inLanguage"] = card["language"]
    if card.get("license"):
        document["license"] = card["license"]
    if card.get("repo_id"):
        document["url"] = f"{HUB}/datasets/{card['repo_id']}"
    document.update(rai_fields(info, measured))
    document["distribution"] = distribution
    document["recordSet"] = record_sets
    return document
