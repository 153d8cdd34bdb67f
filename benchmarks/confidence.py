"""The confidences beyond the sequence probability on the demo, with a real tiny model.

The model is the tests' tiny random-weight Llama (`tests/support/vllm_model.py`), run with
transformers behind the tests' local OpenAI-compatible server (`tests/support/openai_server.py`):
greedy answers at temperature 0, seeded sampling above it, token log-probabilities, and the top
log-probabilities of P(True)'s one token, all computed by the model. Its answers are meaningless
(random weights); what is measured is the plumbing and its cost: every new metric of the `Evaluate`
step on the demo's test split (UA-Bench attribution, KUQ's EER and F1, agreement, semantic
entropy, P(True), temperature scaling fitted on the validation split, or on the test split
itself where the run has no validation split, as the default demo), and the model time of
n sampled answers against one greedy answer.

    python -m benchmarks.confidence --run /tmp/i37-demo/outputs/demo --samples 5 --limit 200

`--run` is a built demo run folder (`luigi --module pipelines CreateDataset`); `--limit` keeps
the first questions of each split (a copy of the splits is scored, the build is not touched).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, support_module


class TinyModel:
    """The tiny Llama answering chat requests; counts generation seconds by request kind."""

    def __init__(self, folder: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        sys.path.insert(0, str(ROOT / "tests"))
        support_module("vllm_model").build_tiny_model(folder)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model = AutoModelForCausalLM.from_pretrained(folder).eval()
        self.lock = threading.Lock()
        self.seconds = {"greedy": 0.0, "sample": 0.0, "p_true": 0.0}
        self.requests = {"greedy": 0, "sample": 0, "p_true": 0}

    def reply(self, body: dict[str, Any], attempt: int, headers: dict[str, str]) -> Any:
        """The server rule: generate for the request's messages and decoding."""
        server = support_module("openai_server")
        torch = self.torch
        text = self.tokenizer.apply_chat_template(
            body["messages"], tokenize=False, add_generation_prompt=True
        )
        ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
        temperature = float(body.get("temperature", 0) or 0)
        top = int(body.get("top_logprobs") or 0)
        kind = "p_true" if top else ("sample" if temperature else "greedy")
        started = time.perf_counter()
        with self.lock, torch.no_grad():
            if temperature:
                torch.manual_seed(int(body.get("seed") or 0))
            out = self.model.generate(
                ids,
                max_new_tokens=int(body.get("max_tokens", 16)),
                do_sample=bool(temperature),
                temperature=temperature or None,
                top_k=0 if temperature else None,
                top_p=None,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        generated = out.sequences[0, ids.shape[1] :].tolist()
        logprobs = [torch.log_softmax(s[0].float(), -1) for s in out.scores]
        tokens = [self.tokenizer.decode([t]) for t in generated]
        stops = body.get("stop") or []
        kept, pairs = "", []
        for token, position, lp in zip(tokens, generated, logprobs, strict=True):
            cuts = [(kept + token).find(stop) for stop in stops if stop in kept + token]
            if cuts:
                kept = (kept + token)[: min(cuts)]
                break
            kept += token
            pairs.append((token, float(lp[position])))
        with self.lock:
            self.seconds[kind] += time.perf_counter() - started
            self.requests[kind] += 1
        if top:
            values, indices = logprobs[0].topk(top)
            alternatives = [
                {"token": self.tokenizer.decode([int(i)]), "logprob": float(v)}
                for v, i in zip(values, indices, strict=True)
            ]
            return server.Reply(text=tokens[0] if tokens else "", top_logprobs=alternatives)
        return server.Reply(text=kept, token_logprobs=pairs or None)


def _limited_run(run: Path, limit: int, into: Path) -> Path:
    """A copy of the run's splits (first `limit` questions each) with its build settings."""
    from tipqa.dataset.splits import SPLITS

    target = into / run.name
    shutil.copytree(run / "splits", target / "splits")
    for split in SPLITS:
        path = target / "splits" / split / "questions.jsonl"
        if path.is_file():
            lines = path.read_text().splitlines()[:limit]
            path.write_text("\n".join(lines) + "\n")
    return target


def main() -> None:
    """Evaluate the tiny model with and without the confidences; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a built demo run folder")
    parser.add_argument("--samples", type=int, default=5, help="sampled answers per question")
    parser.add_argument("--limit", type=int, default=200, help="questions per split at most")
    args = parser.parse_args()

    from tipqa.core.layout import EvaluationLayout, RunLayout, SplitsLayout
    from tipqa.evaluate.confidence import ConfidenceSettings
    from tipqa.evaluate.pipeline import evaluate_model
    from tipqa.evaluate.refusal import RefusalDetector, RefusalSettings
    from tipqa.evaluate.sampling import read_rated
    from tipqa.evaluate.score import ScoringSettings
    from tipqa.llm.answerers.openai import OpenAIAnswerer, OpenAIAnswererSettings
    from tipqa.llm.cache import LLMCache

    work = Path(tempfile.mkdtemp(prefix="tipqa-confidence-"))
    run = _limited_run(args.run, args.limit, work)
    model = TinyModel(work / "tiny-model")
    server = support_module("openai_server").FakeOpenAIServer(model.reply)
    detector = RefusalDetector(RefusalSettings(embedding=False))
    scoring = ScoringSettings(bootstrap=0)
    figures: dict[str, Any] = {}
    with server:
        options = OpenAIAnswererSettings(
            model="tiny-llama", base_url=server.base_url, max_tokens=16, max_concurrency=4
        )

        def evaluate(split: str, name: str, confidence: Any, fit_on: Any = None) -> Any:
            folder = EvaluationLayout(work / name / split)
            started = time.perf_counter()
            result = evaluate_model(
                run / "splits",
                split,
                OpenAIAnswerer(options, cache=LLMCache(work / f"{name}-cache"), progress=False),
                detector,
                scoring,
                folder,
                confidence=confidence,
                fit_on=fit_on,
            )
            return result, time.perf_counter() - started, folder

        _, one_seconds, _ = evaluate("test", "one-answer", ConfidenceSettings())
        one_model = dict(model.seconds)
        chosen = ConfidenceSettings(samples=args.samples, p_true=True, sample_max_tokens=16)
        fit_split = "validation"
        if not SplitsLayout(RunLayout(run).splits).questions("validation").is_file():
            fit_split = "test"  # the default demo makes no validation split: fit on test itself
        _, _, validation = evaluate(fit_split, "fit", chosen)
        before = dict(model.seconds)
        result, all_seconds, _ = evaluate(
            "test", "confidences", chosen, read_rated(validation.confidence)
        )
        test_model = {k: model.seconds[k] - before[k] for k in model.seconds}
    methods = result["confidence_methods"]
    figures = {
        "questions": result["gold"]["questions"],
        "samples": args.samples,
        "temperatures_fitted_on": fit_split,
        "uabench": {k: v for k, v in result["uabench"].items() if k not in ("counts", "mu", "du")},
        "kuq": {
            k: result["confidence"].get(k)
            for k in ("auroc_known_unknown", "eer", "f1", "eer_threshold", "eer_interpolated")
        },
        "methods": {
            name: {k: v for k, v in block.items() if not k.startswith("reliability")}
            for name, block in methods.items()
        },
        "confidence_counts": result["confidence_counts"],
        "seconds": {
            "evaluate_one_answer": round(one_seconds, 2),
            "evaluate_with_confidences": round(all_seconds, 2),
            "model_greedy": round(one_model["greedy"], 2),
            "model_samples": round(test_model["sample"], 2),
            "model_p_true": round(test_model["p_true"], 2),
            "samples_over_one_answer": (
                round(test_model["sample"] / one_model["greedy"], 2)
                if one_model["greedy"]
                else None
            ),
        },
        "requests": model.requests,
        "work": str(work),
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
