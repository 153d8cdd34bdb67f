"""The dataset card (`README.md`) of the Hub-ready folder: YAML metadata, statistics, parameters.

The YAML block declares one entry per configuration under `configs:` with `data_files` per split,
the format the Hub and `datasets.load_dataset` read. Local corpus paths are shown by their last
component only, so the card does not reveal the builder's folders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tipqa.core.text import markdown_table
from tipqa.dataset.corpus_reading import CorpusReading
from tipqa.dataset.provenance import OFFLINE_BACKENDS, offline_backends
from tipqa.dataset.splits import SPLITS
from tipqa.hub.folder_stats import HubFolderStats

PAPER_TITLE = (
    "Parametric Knowledge is Not All You Need: "
    "Toward Honest Large Language Models via Retrieval of Pretraining Data"
)
PAPER_AUTHORS = ("Christopher Adrian Kusuma", "Muhammad Reza Qorib", "Hwee Tou Ng")
BIBTEX_AUTHORS = "Kusuma, Christopher Adrian and Qorib, Muhammad Reza and Ng, Hwee Tou"
DEFAULT_NAME = "TIP-style knowledge-boundary QA benchmark"
TAGS = ("knowledge-boundary", "honesty", "pretraining-data", "tipqa")
OUTCOMES = (
    ("answerable_token", "answerable (token)"),
    ("answerable_vector", "answerable (vector)"),
    ("unanswerable_vector", "unanswerable (vector)"),
    ("discarded_token", "discarded (token)"),
    ("undetermined_token", "undetermined (token)"),
    ("undetermined_vector", "undetermined (vector)"),
)
AUDIT_OUTCOME = ("answerable_audit", "answerable (audit)")
"""The outcome of questions the audit moved to answerable (shown where there are some)."""
FIELDS = {
    "questions": [
        ("id", "question id from the source dataset"),
        ("question", "the question"),
        ("answer", "the gold answer"),
        ("aliases", "every accepted form of the answer"),
        ("label", "`answerable` or `unanswerable`"),
        (
            "stage",
            "the stage that decided: `token` (keyword search), `vector`, or `audit` "
            "(moved to answerable by the audit, `[audit] apply`)",
        ),
        ("reason", "why the question got its label"),
        ("keywords", "the keywords extracted from the question"),
        ("total_matches", "documents containing all keywords and an alias (token search)"),
        (
            "verbatim_docs",
            "documents containing the question's text as a phrase (null: not counted)",
        ),
        ("verbatim_with_alias", "of those, the documents that also contain an answer alias"),
        ("evidence_stage", "stage of the evidence (answerable questions only)"),
        ("evidence_doc_id", "corpus id of the document judged relevant"),
        ("evidence_unit_id", "the judged window or chunk of that document"),
        ("evidence_text", "the judged text"),
    ],
    "instances": [
        ("question_id", "id of the question (in the same split of `questions`)"),
        ("question", "the question"),
        ("answer", "the gold answer"),
        ("doc_id", "corpus id of the retrieved document"),
        ("chunk_id", "the retrieved chunk"),
        ("text", "the chunk's text"),
        ("score", "similarity of the chunk to the question"),
        ("relevant", "the judge's verdict (null when no verdict could be obtained)"),
    ],
    "relevance": [
        ("question_id", "id of the question (in the same split of `questions`)"),
        (
            "stage",
            "`token` (a window of a keyword-search document), `vector` (a chunk) or "
            "`audit` (a window or chunk the audit judged)",
        ),
        ("doc_id", "corpus id of the judged document"),
        ("unit_id", "the judged window or chunk"),
        ("relevance", "1: judged relevant, 0: judged not relevant"),
        ("p_yes", "the judge's probability of relevant (null when the judge gives none)"),
        ("judge", "the judge that gave the verdict"),
        ("start", "character offset in the document where the window or chunk starts"),
        ("end", "character offset in the document where it ends (exclusive)"),
    ],
}


def size_category(count: int) -> str:
    """The Hub's size category for `count` rows."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")]
    bounds += [(1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]
    return next((name for bound, name in bounds if count < bound), "10M<n<100M")


def card_metadata(files: dict[str, dict[str, list[str]]], card: dict[str, Any]) -> dict[str, Any]:
    """The YAML metadata: name, language, license, task, size, and the configurations."""
    meta: dict[str, Any] = {"pretty_name": card.get("pretty_name") or DEFAULT_NAME}
    if card.get("language"):
        meta["language"] = [card["language"]]
    if card.get("license"):
        meta["license"] = card["license"]
    meta["task_categories"] = ["question-answering"]
    meta["tags"] = list(TAGS)
    meta["size_categories"] = [size_category(card.get("_question_rows", 0))]
    configs = []
    for index, (name, splits) in enumerate(files.items()):
        entry: dict[str, Any] = {"config_name": name}
        if index == 0:
            entry["default"] = True
        entry["data_files"] = [
            {"split": split, "path": f"{name}/{split}-*.parquet"}
            for split in SPLITS
            if split in splits
        ]
        configs.append(entry)
    meta["configs"] = configs
    return meta


def _table(header: list[str], rows: Sequence[Sequence[Any]]) -> str:
    return markdown_table(header, rows, _cell)


def _cell(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def statistics_section(info: dict[str, Any], rows: dict[str, dict[str, int]]) -> str:
    """Table 2 of the paper for these splits, what was left out, and outcomes by stage."""
    splits, pools = info["splits"], info["pools"]
    order = [s for s in SPLITS if s in splits]
    outcomes = list(OUTCOMES)
    if any(p["by_stage"].get(AUDIT_OUTCOME[0]) for p in pools.values()):
        outcomes.insert(2, AUDIT_OUTCOME)
    table = _table(
        ["Split", "From pool", "# Answerable", "# Unanswerable", "# Questions", "# Instances"],
        [
            [
                s.capitalize(),
                splits[s]["pool"],
                splits[s]["answerable"],
                splits[s]["unanswerable"],
                splits[s]["questions"],
                splits[s]["instances"],
            ]
            for s in order
        ],
    )
    left = _table(
        ["Pool", "# Questions", "# Discarded", "# Undetermined"],
        [[n, p["questions"], p["discarded"], p["undetermined"]] for n, p in pools.items()],
    )
    stages = _table(
        ["", *(title for _, title in outcomes)],
        [[f"split {s}", *(splits[s]["by_stage"].get(k, 0) for k, _ in outcomes)] for s in order]
        + [
            [f"pool {n}", *(p["by_stage"].get(k, 0) for k, _ in outcomes)] for n, p in pools.items()
        ],
    )
    parts = [
        "## Statistics",
        table,
        "Discarded questions (more than k1 keyword-matching documents, none judged relevant) and "
        "undetermined ones (a judgment could not be obtained) are in no split:",
        left,
        "Questions by final label and the stage that decided it:",
        stages,
    ]
    missing = [
        f"`{config}` / `{split}`"
        for config in ("questions", "instances")
        for split in order
        if split not in rows.get(config, {})
    ]
    if missing:
        parts.append(
            "Left out because they have no rows (an empty split cannot be loaded): "
            + ", ".join(missing)
            + "."
        )
    return "\n\n".join(parts)


def corpus_section(reading: dict[str, Any] | None) -> list[str]:
    """What the corpus reader skipped, by kind, and the duplicate ids (none when unrecorded)."""
    if reading is None:
        return []
    return ["## Corpus records\n\n" + CorpusReading.from_dict(reading).markdown()]


def splits_section(info: dict[str, Any]) -> str:
    """How each split was made."""
    protocol, validation = info["protocol"], info.get("validation") or {}
    test = protocol["test_pool"]
    lines = ["## Splits", f"- **test**: every answerable and unanswerable question of `{test}`."]
    if protocol.get("train_pool") is None:
        lines.append("- No train pool was configured, so there are no train and validation splits.")
    else:
        pool = protocol["train_pool"]
        lines.append(
            f"- **validation**: a balanced random sample (seed {protocol['seed']}) of "
            f"{validation['taken_per_label']:,} answerable and {validation['taken_per_label']:,} "
            f"unanswerable questions of pool `{pool}`."
        )
        if validation["short"]:
            lines.append(
                f"  {protocol['validation_per_label']:,} per label were asked for; pool `{pool}` "
                f"has {validation['available']['answerable']:,} answerable and "
                f"{validation['available']['unanswerable']:,} unanswerable questions."
            )
        lines.append(f"- **train**: the other answerable and unanswerable questions of `{pool}`.")
    lines.append("- The splits share no question id (checked when they are made).")
    return "\n".join(lines)


def _llm(settings: dict[str, Any]) -> str:
    backend = settings.get("backend")
    if backend in OFFLINE_BACKENDS:
        return f"`{backend}` (**offline rules**, not a language model)"
    text = f"`{backend}` model `{settings.get('model')}`, prompt `{settings.get('prompt')}`"
    return text + f" (SHA-256 `{settings.get('prompt_sha256')}`)"


def _windows(windows: dict[str, Any]) -> str:
    words = windows.get("max_words")
    size = f"at most {words:,} words" if words else "sized to the judge's context"
    return f"{size}; at most {windows.get('max_windows')} windows per document"


def _corpus(corpus: dict[str, Any]) -> str:
    where = corpus.get("name") or ", ".join(corpus.get("files") or [])
    return f"`{corpus.get('source')}` {where}".strip()


def rules_warning(params: dict[str, Any]) -> str | None:
    """One sentence when the keywords or the judge were offline rules, else None."""
    offline = offline_backends(params)
    if not offline:
        return None
    which = " and ".join(
        "the keyword extractor" if p == "keywords" else "the judge" for p in offline
    )
    return (
        f"**Warning: {which} of this build {'were' if len(offline) > 1 else 'was'} offline rules, "
        "not a language model.** Rules find few of the documents an LLM judge accepts, so many "
        "answerable questions are labelled unanswerable: use this build as a demo, a smoke test "
        "or a lower bound, not as a TIP-style benchmark."
    )


def _vector_stage(params: dict[str, Any]) -> str:
    """The vector stage: a full index of the corpus, or the chunks of BM25 candidates only."""
    backend = params.get("vector_index")
    search = params.get("vector_search") or {}
    if backend != "candidates":
        return f"`{backend}` index of every chunk of the corpus"
    query = "the question" if search.get("query") == "question" else "the question and answers"
    return (
        f"`candidates`: the chunks of the first {search.get('candidates')} documents by the token "
        f"index's BM25 over {query}, embedded on demand; exact nearest chunks among them"
    )


def _applied(pool: str, audit: dict[str, Any]) -> str:
    settings, moved = audit["settings"], audit["moved"]
    return (
        f"pool `{pool}`: {moved['unanswerable']:,} unanswerable and {moved['discarded']:,} "
        f"discarded questions moved to answerable (sample {settings['sample']}, seed "
        f"{settings['seed']}, budget {settings['budget']})"
    )


def parameters_section(params: dict[str, Any], audits: dict[str, Any] | None = None) -> str:
    """The construction parameters, as the build's steps recorded them (and the audits whose
    findings the splits applied)."""
    embedder = params["embedder"]
    embedding = f"`{embedder.get('backend')}` model `{embedder.get('model')}`"
    prefixes = [(k, embedder.get(k)) for k in ("query_prefix", "passage_prefix")]
    embedding += "".join(f", {k.replace('_', ' ')} `{v}`" for k, v in prefixes if v)
    judge = params["judge"]
    rows: list[list[Any]] = [
        ["k1 (token-stage documents judged at most)", params.get("k1")],
        ["k2 (vector-stage chunks judged)", params.get("k2")],
        ["corpus", _corpus(params["corpus"])],
        ["token index", f"`{params.get('token_index')}`"],
        ["vector stage", _vector_stage(params)],
        ["embedder", embedding],
        ["keyword extractor", _llm(params["keywords"])],
        ["relevance judge", _llm(judge)],
        ["judge windows", _windows(params["windows"])],
        [
            "tipqa version",
            f"{params.get('tipqa_version')} (record schema {params.get('schema_version')})",
        ],
    ]
    if judge.get("mode"):
        rows.insert(8, ["judge mode", judge["mode"]])
    if audits:
        applied = "; ".join(_applied(pool, audit) for pool, audit in audits.items())
        rows.insert(-1, ["audit applied", applied])
    warning = rules_warning(params)
    table = _table(["Parameter", "Value"], rows)
    return "## Construction parameters\n\n" + (f"{warning}\n\n" if warning else "") + table


def fields_section(rows: dict[str, dict[str, int]]) -> str:
    """What each column of each configuration holds."""
    parts = ["## Fields"]
    for config, fields in FIELDS.items():
        if config in rows:
            parts.append(f"`{config}`:\n\n" + _table(["Column", "Meaning"], fields))
    return "\n\n".join(parts)


def bibtex() -> str:
    """The BibTeX entry of the paper whose Algorithm 1 the build follows."""
    return "\n".join(
        [
            "@misc{kusuma-parametric-knowledge,",
            f"  title  = {{{PAPER_TITLE}}},",
            f"  author = {{{BIBTEX_AUTHORS}}},",
            "}",
        ]
    )


def citation_section() -> str:
    """How to cite the method."""
    authors = ", ".join(PAPER_AUTHORS[:-1]) + f", and {PAPER_AUTHORS[-1]}"
    return (
        "## Citation\n\nThe method (Algorithm 1 of the paper) is from:\n\n"
        f"{authors}. *{PAPER_TITLE}*.\n\n```bibtex\n{bibtex()}\n```\n\n"
        "When the questions come from TriviaQA, cite TriviaQA (Joshi et al., 2017) as well."
    )


def card_description(configs: Sequence[str]) -> str:
    """What the benchmark is and what its configurations hold (the card's opening, and the
    description of `croissant.json`)."""
    listed = ", ".join(f"`{c}`" for c in configs) or "none"
    return (
        "Every question is labelled **answerable** (a document of the pretraining "
        "corpus contains what is needed to answer it, shown as evidence) or **unanswerable** "
        "(none does), by keyword search then vector search over the corpus with an LLM judging "
        "relevance (Algorithm 1 of the paper in the citation). Built with tipqa.\n\n"
        f"Configurations: {listed}. `questions` holds the labelled questions with their evidence; "
        "`instances` holds every (question, answer, document, relevance) instance of the vector "
        "stage, the data that trains an answerability classifier."
        + (
            " `relevance` holds every judged window and chunk of both stages (TREC qrels of "
            "the same judgments: `relevance/<split>.qrels.txt`)."
            if "relevance" in configs
            else ""
        )
    )


def render_card(
    stats: dict[str, Any],
    folder: HubFolderStats,
    card: dict[str, Any],
    extra_sections: Sequence[str] = (),
) -> str:
    """The whole `README.md`: YAML front matter, then the sections (`extra_sections` before
    the citation)."""
    import yaml

    info = stats["info"]
    rows, files = folder.rows, folder.files
    meta = card_metadata(files, {**card, "_question_rows": sum(rows.get("questions", {}).values())})
    name = meta["pretty_name"]
    repo = card.get("repo_id") or "<user>/<name>"
    usage = "\n".join(
        [
            "```python",
            "from datasets import load_dataset",
            "",
            f'questions = load_dataset("{repo}", "questions")',
            f'instances = load_dataset("{repo}", "instances")',
            "```",
        ]
    )
    intro = f"# {name}\n\n{card_description(list(files))}\n\n{usage}"
    sections = [
        intro,
        splits_section(info),
        statistics_section(info, rows),
        *corpus_section(info["parameters"].get("corpus_reading")),
        parameters_section(info["parameters"], info.get("audit")),
        fields_section(rows),
        *extra_sections,
        citation_section(),
    ]
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return f"---\n{front}---\n\n" + "\n\n".join(sections) + "\n"
