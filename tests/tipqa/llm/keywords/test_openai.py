"""The few-shot keyword extractor against a real local chat-completions server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from support import openai_server as fake

from tipqa.core.errors import ConfigError
from tipqa.core.records import Question
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS
from tipqa.llm.keywords.llm import parse_keywords
from tipqa.llm.keywords.openai import OpenAIKeywordExtractor, OpenAIKeywordSettings
from tipqa.llm.prompts import load_template

ANSWERS = {
    "Which painter lived at Quillon House in 1851?": "Quillon House, 1851",
    "Who founded the Larkspur Society?": ' "Larkspur Society" , larkspur society, Paris, ,',
    "What did Tomas Brevik invent?": "inventor, Nobody",
    "Who wrote Ashes of Corvel?": "[[500:99]]",
}


def keyword_rule(body, attempt, headers):
    """Answer each known question with its scripted keywords (markers still apply)."""
    module = fake
    answer = ANSWERS.get(module.last_user_message(body), "")
    return module.marker_reply(answer, attempt, headers) or module.Reply(text=answer)


@pytest.fixture
def server(monkeypatch) -> Iterator:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with fake.FakeOpenAIServer(keyword_rule) as running:
        yield running


def make_extractor(server, **options) -> OpenAIKeywordExtractor:
    options.setdefault("backoff_base", 0.001)
    options.setdefault("max_retries", 1)
    settings = OpenAIKeywordSettings(model="kw-model", base_url=server.base_url, **options)
    return OpenAIKeywordExtractor(settings, progress=False)


def question(text: str, index: int = 0) -> Question:
    return Question(id=f"q{index}", text=text, answer="x", aliases=["x"])


@pytest.mark.needs("openai")
def test_few_shot_messages(server) -> None:
    extractor = make_extractor(server)
    extractor.extract([question("Which painter lived at Quillon House in 1851?")])
    [body] = server.bodies
    data = json.loads(load_template("keywords-v1").text)
    expected = [{"role": "system", "content": data["system"]}]
    for example in data["examples"]:
        expected.append({"role": "user", "content": example["question"]})
        expected.append({"role": "assistant", "content": example["keywords"]})
    expected.append({"role": "user", "content": "Which painter lived at Quillon House in 1851?"})
    assert body["messages"] == expected
    assert body["model"] == "kw-model" and body["temperature"] == 0
    assert extractor.name == f"openai:kw-model:{load_template('keywords-v1').short_hash}"


@pytest.mark.needs("openai")
def test_extraction_filters_and_reports(server) -> None:
    extractor = make_extractor(server)
    texts = list(ANSWERS)
    painter, society, inventor, failed = extractor.extract(
        [question(text, i) for i, text in enumerate(texts)]
    )
    assert painter.keywords == ["Quillon House", "1851"] and painter.error is None
    assert painter.raw == "Quillon House, 1851" and painter.question_id == "q0"
    assert society.keywords == ["Larkspur Society"] and society.error is None
    assert inventor.keywords == [] and inventor.error.startswith("no keywords")
    assert failed.keywords == [] and failed.error.startswith("http_500")
    counts = extractor.stats.counts
    assert counts["keywords_kept"] == 3
    assert counts["keywords_dropped_duplicate"] == 1
    assert counts["keywords_dropped_not_in_question"] == 3
    assert counts["failed"] == 2
    assert extractor.stats.errors["no_keywords"] == 1
    assert extractor.stats.errors["http_500"] == 1


def test_parse_keywords() -> None:
    parsed = parse_keywords(
        "Mont Blanc, mont blanc,  , 'Chamonix.'\nItaly, Blanc Mont", "Is Mont Blanc near Chamonix?"
    )
    assert parsed.keywords == ["Mont Blanc", "Chamonix"]
    assert parsed.duplicates == ["mont blanc"]
    assert parsed.absent == ["Italy", "Blanc Mont"]
    assert parse_keywords("", "Anything?").keywords == []


@pytest.mark.needs("openai")
def test_custom_template(server, tmp_path) -> None:
    path = tmp_path / "kw.json"
    path.write_text(json.dumps({"system": "List entities.", "user": "Q: {question}"}))
    extractor = make_extractor(server, prompt=str(path))
    extractor.extract([question("Who wrote Ashes of Corvel?")])
    assert server.bodies[0]["messages"] == [
        {"role": "system", "content": "List entities."},
        {"role": "user", "content": "Q: Who wrote Ashes of Corvel?"},
    ]


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("not json", "not valid JSON"),
        (json.dumps({"user": "{question}"}), "'system'"),
        (json.dumps({"system": "s", "user": "no slot"}), r"\{question\}"),
        (json.dumps({"system": "s", "user": "{question}", "examples": [{}]}), r"examples\[0\]"),
    ],
)
def test_bad_templates_are_config_errors(server, tmp_path, template, message) -> None:
    path = tmp_path / "kw.json"
    path.write_text(template)
    with pytest.raises(ConfigError, match=message):
        make_extractor(server, prompt=str(path))


@pytest.mark.needs("openai")
def test_created_from_the_registry(server) -> None:
    settings = KEYWORD_EXTRACTORS.parse(
        "openai", "keywords", {"model": "m", "base_url": server.base_url}
    )
    extractor = KEYWORD_EXTRACTORS.create("openai", settings, progress=False)
    [keywords] = extractor.extract([question("Who founded the Larkspur Society?")])
    assert keywords.keywords == ["Larkspur Society"]
