"""The one judging engine: units judged in rounds across the open items, one batch a round.

An item (a question of the token stage, of the vector stage, of an audit) is judged unit by
unit. Each round, every open item takes its next candidate (`take`, naming the document to
fetch, if any); the round's documents are fetched at once; each item turns its candidate into
judge requests (`requests`); all of them go to the judge in one batch, and each verdict goes
back to its item (`record`), which decides whether it stays open (early exit at a "yes", a
budget spent, candidates run out). A document the index no longer holds is counted
(`missing_document`) and the item says what it keeps of it (`missing`).

With a confirming judge (`[judge.confirm]`), every "yes" of the round is asked again of it, in
one batch, before the items hear their verdicts: a judgment carries its confirmation, and its
`verdict` is "yes" only where both said yes. A failed confirmation is a failed judgment,
never a "no".
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence

from tqdm import tqdm

from tipqa.core.errors import UnreachableError
from tipqa.core.records import Confirmation, Document, JudgeRequest, Judgment
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.llm.judges.base import RelevanceJudge

CONFIRM_PREFIX = "confirm."
"""The prefix of the confirming judge's counters in a step's stats."""
CONFIRM_SECTION = "judge.confirm"
"""The config section of the confirming judge."""
UNREACHABLE = ("connection", "http_404")
"""The errors of a server that is not there, or holds no such model."""


class JudgedItem(ABC):
    """An item judged in rounds; a subclass says what it asks and what it keeps."""

    @property
    @abstractmethod
    def open(self) -> bool:
        """True while it has units left to judge."""

    @abstractmethod
    def take(self) -> str | None:
        """Move on to the next candidate; the id of the document it needs (None: none)."""

    @abstractmethod
    def requests(self, document: Document | None) -> list[JudgeRequest]:
        """The requests of the candidate taken (`document`: the one it needs, fetched)."""

    @abstractmethod
    def record(self, request: JudgeRequest, result: Judgment) -> None:
        """Keep one verdict on one of its requests (in request order)."""

    def missing(self, doc_id: str) -> list[Judgment]:
        """What it keeps of a candidate whose document is missing (nothing by default)."""
        return []

    def end_round(self) -> None:  # noqa: B027 (a hook: most items keep nothing per round)
        """Called once the round's verdicts are all recorded (nothing by default)."""


@dataclasses.dataclass(frozen=True)
class Judges:
    """The judges of a step: the build's, and the confirming judge of its yes answers."""

    judge: RelevanceJudge
    confirm: RelevanceJudge | None = None

    def info(self) -> dict[str, str]:
        """The judges' names, for a step's stats."""
        named = {"judge": self.judge.name}
        if self.confirm is not None:
            named["confirm_judge"] = self.confirm.name
        return named

    def count(self, stats: StepStats) -> None:
        """Fold in what the judges counted (the confirming judge's under `confirm.`)."""
        stats.merge_counted(self.judge)
        if self.confirm is not None:
            stats.merge_counted(self.confirm, prefix=CONFIRM_PREFIX)

    def close(self) -> None:
        """Let go of the judges' connections."""
        self.judge.close()
        if self.confirm is not None:
            self.confirm.close()

    def judge_batch(self, requests: list[JudgeRequest], stats: StepStats) -> list[Judgment]:
        """One judgment per request, each "yes" confirmed when there is a confirming judge;
        counts `prompts`, `confirmation_prompts` and the failures."""
        stats.add("prompts", len(requests))
        results = self.judge.judge(requests) if requests else []
        if self.confirm is not None:
            results = confirmed(requests, results, self.confirm, stats)
        for result in results:
            stats.judgment_failed(result)
        return results


def as_judges(judge: RelevanceJudge | Judges) -> Judges:
    """The judges of a step given its judge alone (no confirmation), or its judges."""
    return judge if isinstance(judge, Judges) else Judges(judge)


def confirmed(
    requests: Sequence[JudgeRequest],
    results: list[Judgment],
    confirm: RelevanceJudge,
    stats: StepStats,
) -> list[Judgment]:
    """`results` with the confirming judge's verdict on each "yes" (asked once each)."""
    yes = [i for i, result in enumerate(results) if result.label == "yes"]
    stats.add("confirmation_prompts", len(yes))
    if not yes:
        return results
    answers = confirm.judge([requests[i] for i in yes])
    check_reached(answers, CONFIRM_SECTION)
    out = list(results)
    for i, answer in zip(yes, answers, strict=True):
        out[i] = dataclasses.replace(results[i], confirmation=Confirmation.of(answer))
        stats.add(f"confirmation_{answer.label}" if answer.label else "confirmation_failed")
    return out


def check_reached(answers: Sequence[Judgment], section: str) -> None:
    """An UnreachableError naming `section` when every answer of a second judge failed because
    its server cannot be reached or lacks the model (nothing it could say would be written)."""
    if not answers or any(a.label is not None for a in answers):
        return
    kinds = {(a.error or "").split(":")[0] for a in answers}
    if kinds <= set(UNREACHABLE):
        said = ", ".join(sorted(kinds))
        raise UnreachableError(
            f"[{section}] the judge {answers[0].judge} did not answer ({said}): check its "
            "base_url and model, and that its server runs; this step wrote nothing"
        )


def judge_in_rounds(
    items: Sequence[JudgedItem],
    fetch: FetchDocuments | None,
    judges: RelevanceJudge | Judges,
    stats: StepStats,
    *,
    desc: str = "judging rounds",
    rounds: int | None = None,
) -> list[Judgment]:
    """Judge the items round by round until none is open; every judgment, in order.

    `rounds` is the most rounds there can be (the progress bar's total), when known.
    """
    judgments: list[Judgment] = []
    with tqdm(total=rounds, desc=desc, leave=False) as bar:
        while opened := [item for item in items if item.open]:
            wanted = [item.take() for item in opened]
            needed = sorted({doc_id for doc_id in wanted if doc_id is not None})
            documents = fetch(needed) if fetch is not None and needed else {}
            requests: list[JudgeRequest] = []
            owners: list[JudgedItem] = []
            for item, doc_id in zip(opened, wanted, strict=True):
                if doc_id is not None and doc_id not in documents:
                    stats.error("missing_document")
                    judgments += item.missing(doc_id)
                    continue
                mine = item.requests(None if doc_id is None else documents[doc_id])
                requests += mine
                owners += [item] * len(mine)
            results = as_judges(judges).judge_batch(requests, stats)
            judgments += results
            for item, request, result in zip(owners, requests, results, strict=True):
                item.record(request, result)
            for item in opened:
                item.end_round()
            bar.update()
    return judgments
