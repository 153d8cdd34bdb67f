"""The cost preview counts what judging will send, before any judging."""

from __future__ import annotations

from pathlib import Path

from tipqa.config import read_config
from tipqa.cost import PreviewInputs, judge_all_cost, preview_cost, preview_pool
from tipqa.jsonl import read_json, write_records
from tipqa.layout import ShardLayout
from tipqa.records import Document, Question, TokenCandidates, TokenHit
from tipqa.stages.inputs import TokenJudgeInputs, TokenSearchInputs
from tipqa.windows import WindowSettings

DOCS = {
    "d1": Document("d1", "Ada Vell was born in Orrin.\n\nShe wrote songs."),
    "d2": Document("d2", "Ada Vell sailed.\n\nOrrin is a port.\n\nAda Vell left Orrin."),
    "d3": Document("d3", "Nothing about it " * 50),
}


def fetch(ids: list[str]) -> dict[str, Document]:
    return {i: DOCS[i] for i in ids if i in DOCS}


def candidates(qid: str, ids: list[str], total: int) -> TokenCandidates:
    return TokenCandidates(qid, ["Ada Vell"], total, [TokenHit(i, 1.0) for i in ids])


def test_bounds_follow_windows_k1_and_reachability() -> None:
    questions = [
        Question("q1", "Where was Ada Vell born?", "Orrin", ["Orrin"]),
        Question("q2", "Where did Ada Vell go?", "Orrin", ["Orrin"]),
        Question("q3", "Who?", "Orrin", ["Orrin"]),
    ]
    found = {
        "q1": candidates("q1", ["d1", "d2", "d3"], 3),
        "q2": candidates("q2", ["d2", "missing"], 2),
        "q3": candidates("q3", [], 0),
    }
    preview = preview_cost(questions, found, fetch, WindowSettings(), 2, 10, 40, 256)
    token = preview["token_stage"]
    # q1 judges d1 (one window) and d2 (two windows: paragraphs 1-2 and 3); d3 is past k1=2.
    # q2 judges d2 (two windows); "missing" is not in the index.
    assert token["prompts_at_most"] == 1 + 2 + 2
    assert token["prompts_at_least"] == 1 + 2
    assert token["prompt_tokens_at_least"] < token["prompt_tokens_at_most"]
    # q2 (2 matches) and q3 (none) can reach the vector stage; q1 has more than k1 matches.
    assert preview["vector_stage"] == {
        "questions_at_most": 2,
        "prompts_at_most": 20,
        "prompt_tokens_at_most": 20 * (256 + round(40 * 1.33)),
    }


def test_judging_all_candidates_costs_the_upper_bound() -> None:
    questions = [Question("q1", "Where was Ada Vell born?", "Orrin", ["Orrin"])]
    found = {"q1": candidates("q1", ["d1", "d2", "d3"], 3)}
    preview = preview_cost(questions, found, fetch, WindowSettings(), 3, 10, 40, 256)
    added = judge_all_cost(preview)
    token = preview["token_stage"]
    assert added["prompts"] == token["prompts_at_most"] == 1 + 2 + 1
    assert added["added_prompts_at_most"] == token["prompts_at_most"] - 1
    assert added["prompt_tokens"] == token["prompt_tokens_at_most"]
    assert 0 < added["added_prompt_tokens_at_most"] < added["prompt_tokens"]


def preview_inputs(judge_all: bool) -> PreviewInputs:
    """The cost preview's inputs under the default settings, with k1 = 3 and k2 = 10."""
    config = read_config({})
    search = TokenSearchInputs(3, config.token_index, "keywords", "token-index")
    judging = TokenJudgeInputs(config.judge, config.windows, judge_all, search)
    return PreviewInputs(judging, 10, config.embedder, "questions")


def test_the_pool_preview_says_what_judging_all_adds(tmp_path: Path) -> None:
    questions = [Question("q1", "Where was Ada Vell born?", "Orrin", ["Orrin"])]
    shard = ShardLayout(tmp_path / "shard-00000")
    write_records(shard.token_candidates, [candidates("q1", ["d1", "d2", "d3"], 3)])
    shards = [(questions, shard)]
    plain = preview_pool(shards, fetch, preview_inputs(False), tmp_path / "plain.json")
    assert "judge_all_candidates" not in plain
    inputs = preview_inputs(True)
    every = preview_pool(shards, fetch, inputs, tmp_path / "all.json")
    assert every["judge_all_candidates"] == judge_all_cost(plain)
    assert every["judge_all_candidates"]["added_prompts_at_most"] == 3
    written = read_json(tmp_path / "all.json")
    assert written["judge_all_candidates"] == every["judge_all_candidates"]
    assert written["fingerprint"] == inputs.record.fingerprint
