"""Question sources: TriviaQA files in the release, Hugging Face and our own layouts."""

from tipqa.sources.questions.base import (
    QUESTION_SOURCES,
    QuestionSource,
    build_aliases,
    load_questions,
)

__all__ = ["QUESTION_SOURCES", "QuestionSource", "build_aliases", "load_questions"]
