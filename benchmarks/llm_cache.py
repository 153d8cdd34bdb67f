"""The LLM cache on the judge's batch path: judge prompts/s with no cache, an empty one, a full one.

    python -m benchmarks.llm_cache [--prompts 4000] [--repeat 0.25] [--delay 0.02]

An OpenAI-compatible judge (`[judge] backend = openai`, `max_concurrency` 128, as at Pile scale
over vLLM's server) judges `--prompts` requests, a share `--repeat` of them repeating another's
prompt, against the tests' local server, which answers each request after `--delay` seconds:
without the cache, with an empty cache (each distinct prompt a miss, asked once, stored as it
arrives) and with the cache that run filled (every prompt a hit, no request). The server's most
requests in flight show whether the misses went out together. An in-process provider (no HTTP,
every answer at once) then isolates what the cache itself costs per prompt.
"""

from __future__ import annotations

import random
import shutil
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.common import arguments, save, stopwatch, support_module, table
from tipqa.builder.components import make_judge
from tipqa.config import Choice
from tipqa.core.records import JudgeRequest
from tipqa.core.settings import setting
from tipqa.core.stats import StepStats
from tipqa.llm.chat import ChatModel, ChatPrompt, Completion, Decoding, PromptByPrompt
from tipqa.llm.judges.base import JUDGES
from tipqa.llm.providers import register_provider
from tipqa.llm.settings import LLMSettings
from tipqa.llm.usage import Usage

CONCURRENCY = 128
WORDS = (
    "harbour lantern keeper painted wall river bridge choir village museum curator ship "
    "captain comet hills bookshop newspaper festival mill lake island tower market"
).split()


def requests(count: int, repeat: float, seed: int = 7) -> list[JudgeRequest]:
    """`count` judge requests of about 200 words; a share `repeat` repeats an earlier prompt."""
    rng = random.Random(seed)
    distinct = max(1, round(count * (1 - repeat)))
    texts = [" ".join(rng.choices(WORDS, k=200)) + f" ({i})" for i in range(distinct)]
    texts += [rng.choice(texts) for _ in range(count - distinct)]
    rng.shuffle(texts)
    return [
        JudgeRequest(
            f"q{i}",
            "Who painted the harbour wall?",
            "the keeper",
            [],
            ["harbour wall"],
            "token",
            f"d{i}",
            f"d{i}#0",
            text,
        )
        for i, text in enumerate(texts)
    ]


class InstantChatModel(PromptByPrompt):
    """A transport that answers "yes" at once, in process (what is left is the cache's cost)."""

    provider = "instant"

    def __init__(self, model: str, stats: StepStats) -> None:
        self.model, self.stats = model, stats

    def identity(self) -> dict[str, Any]:
        """The model (the only thing that decides these answers)."""
        return {"provider": self.provider, "model": self.model}

    def complete_one(self, prompt: ChatPrompt, decoding: Decoding) -> Completion:
        """ "yes", with its top log-probabilities."""
        self.stats.add("requests")
        return Completion("yes", [[("yes", -0.1), ("no", -2.4)]], [-0.1], Usage(300, 1))


@dataclass(frozen=True)
class InstantSettings(LLMSettings):
    """The in-process provider's settings."""

    provider: ClassVar[str] = "instant"
    model: str = setting("instant", doc="a name")

    def transport(self, stats: StepStats, *, progress: bool = True) -> ChatModel:
        """The instant transport."""
        return InstantChatModel(self.model, stats)


def judge_run(choice: Choice, cache: Path | None, batch: list[JudgeRequest]) -> dict[str, Any]:
    """Judge `batch` once with a fresh judge of `choice`; seconds, prompts/s and cache counters."""
    with closing(make_judge(choice, cache)) as judge, stopwatch() as clock:
        judgments = judge.judge(batch)
    assert len(judgments) == len(batch) and all(j.label for j in judgments), "every prompt judged"
    counts = judge.stats.counts  # type: ignore[attr-defined]
    return {
        "seconds": round(clock["seconds"], 3),
        "prompts_per_s": round(len(batch) / clock["seconds"]),
        "hits": int(counts.get("cache_hits", 0)),
        "stored": int(counts.get("cache_stored", 0)),
    }


def readings(choice: Choice, folder: Path, batch: list[JudgeRequest], server: Any) -> list[dict]:
    """No cache, an empty cache, the filled cache: one row each."""
    shutil.rmtree(folder, ignore_errors=True)
    rows = []
    for reading, cache in (("no cache", None), ("empty cache", folder), ("full cache", folder)):
        if server is not None:
            server.reset()
        row = {"reading": reading, **judge_run(choice, cache, batch)}
        if server is not None:
            row.update(requests=server.calls, most_in_flight=server.max_in_flight)
        rows.append(row)
    return rows


def main() -> None:
    """Both transports, every reading; print the table, save the JSON."""

    def extra(parser: Any) -> None:
        parser.add_argument("--prompts", type=int, default=4000, help="judge requests")
        parser.add_argument("--repeat", type=float, default=0.25, help="share of repeats")
        parser.add_argument("--delay", type=float, default=0.02, help="server seconds/request")

    args = arguments(__doc__.splitlines()[0], extra)
    batch = requests(args.prompts, args.repeat)
    folder = args.workdir / "llm-cache-bench"
    module = support_module("openai_server")
    with module.FakeOpenAIServer(delay=args.delay) as server:
        settings = {
            "model": "judge",
            "base_url": server.base_url,
            "max_concurrency": str(CONCURRENCY),
        }
        choice = Choice("openai", JUDGES.parse("openai", "judge", settings))
        served = [
            {"transport": "openai server", **row}
            for row in readings(choice, folder / "served", batch, server)
        ]
    register_provider("instant", InstantSettings)
    instant = Choice("instant", JUDGES.parse("instant", "judge", {}))
    local = [
        {"transport": "in process", **row}
        for row in readings(instant, folder / "instant", batch, None)
    ]
    shutil.rmtree(folder, ignore_errors=True)
    rows = served + local
    columns = ["transport", "reading", "seconds", "prompts_per_s", "hits", "stored"]
    print(table(rows, [*columns, "requests", "most_in_flight"]))
    distinct = len({r.text for r in batch})
    data = {"prompts": len(batch), "distinct": distinct, "delay": args.delay, "rows": rows}
    print("saved", save("llm_cache", data, args.results))


if __name__ == "__main__":
    main()
