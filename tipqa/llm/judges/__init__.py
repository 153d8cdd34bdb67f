"""Relevance judges: does a text contain what is needed to answer a question?"""

from tipqa.llm.judges.base import JUDGES, RelevanceJudge

__all__ = ["JUDGES", "RelevanceJudge"]
