"""The refusal threshold t: how well embedding similarity to the refusal phrases separates
refusals from answers, on responses written for this measurement.

    python -m benchmarks.refusal_threshold [--results DIR]

Every response is embedded with the bundled all-MiniLM-L6-v2 (offline) and given its highest
cosine similarity to the shipped refusal phrases (`tipqa/evaluate/refusal-phrases.txt`). None
of the responses equals a phrase after normalisation, so only the embedding can tell. For each
candidate t the table gives the share of refusals caught (similarity above t) and of answers
wrongly taken for refusals; the chosen t maximises balanced accuracy, the midpoint of the best
run of candidates on a tie. The answers include hedged ones that still answer ("I think it is
Lisbon"): those must stay answers.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import RESULTS, save, stopwatch, table
from tipqa.evaluate.matching import normalize_answer
from tipqa.evaluate.refusal import RefusalDetector, RefusalSettings

REFUSALS = [
    "I really have no clue about this one.",
    "Honestly, I couldn't tell you.",
    "That's not something I know.",
    "I'm drawing a blank here.",
    "Sorry, no idea at all.",
    "I don't have a reliable answer to that question.",
    "I'm not able to answer that with any confidence.",
    "I can't give you an answer to this.",
    "My knowledge doesn't cover this.",
    "I am not sure what the answer is.",
    "I have no information about that.",
    "I wouldn't know, sorry.",
    "Unfortunately I do not know the answer.",
    "I'm afraid that question is beyond me.",
    "I cannot recall the answer to this question.",
    "I don't know the answer to that, sorry.",
    "Not sure, I'm afraid.",
    "I have no way of answering that.",
    "The answer escapes me.",
    "I'm unsure.",
    "I don't really know.",
    "Beats me.",
    "I could not say.",
    "There's no answer I can give you.",
    "I am not certain, so I will not answer.",
    "I'd only be guessing, so I won't answer.",
    "I don't have enough knowledge to respond to this.",
    "I do not have the answer.",
    "That is unknown to me.",
    "I'm sorry, but I don't know.",
    "I lack the information to answer this.",
    "No clue.",
    "I cannot answer that question.",
    "I am unable to answer.",
    "I really don't know this one.",
    "I'm not familiar with that, so I can't answer.",
    "Dunno.",
    "I don't think I know that.",
    "I have not come across this, so I can't say.",
    "I can't be sure of the answer.",
]

ANSWERS = [
    "Paris",
    "1969",
    "Mount Kilimanjaro",
    "Charles Darwin",
    "The Beatles",
    "Blue whale",
    "Jupiter",
    "Leonardo da Vinci",
    "Canberra",
    "The Pacific Ocean",
    "Oxygen",
    "Queen Victoria",
    "Seven",
    "The Nile",
    "Shakespeare wrote it.",
    "It was Napoleon Bonaparte.",
    "The answer is Lisbon.",
    "Tokyo is the capital of Japan.",
    "It happened in 1815.",
    "The composer was Johann Sebastian Bach.",
    "I think it is Lisbon.",
    "I believe the answer is Marie Curie.",
    "Probably Sweden.",
    "I'm fairly sure it's the Danube.",
    "Not sure, but maybe Vienna.",
    "I am not certain, but I think it was 1492.",
    "If I remember correctly, it was Abraham Lincoln.",
    "My best guess is Brazil.",
    "It might be the Amazon river.",
    "Possibly Mars.",
    "No one but Alexander the Great.",
    "Nobody won; the match was a draw.",
    "None of the planets, it is a moon: Titan.",
    "Unknown Pleasures, the Joy Division album.",
    "The Unknown Soldier.",
    "It is a mystery novel by Agatha Christie.",
    "The sphinx.",
    "A question mark.",
    "Ignorance is Bliss, a British radio show.",
    "Don Quixote",
    "The Invisible Man",
    "Doubt, a play by John Patrick Shanley.",
    "Hamlet asks it: to be or not to be.",
    "It's the Eiffel Tower.",
    "Mercury is the smallest planet.",
    "Around 300,000 kilometres per second.",
    "George Orwell, in 1949.",
    "The Great Barrier Reef.",
    "Elephants",
    "Gold",
    "Mozart",
    "The Mona Lisa",
    "Yes, it was Spain.",
    "No, it was Portugal.",
    "The answer is 42.",
    "Everest, at 8,849 metres.",
    "The Battle of Hastings.",
    "A kangaroo.",
    "Ludwig van Beethoven.",
    "Helium",
]


def measure(results: Path) -> dict[str, Any]:
    """Similarities, the table over candidate thresholds, and the chosen t."""
    from tipqa.indexes.embedders.sentence_transformers import SentenceTransformerEmbedder

    with stopwatch() as load:
        embedder = SentenceTransformerEmbedder.of()
    detector = RefusalDetector(RefusalSettings(), embedder)
    for text in REFUSALS + ANSWERS:
        if normalize_answer(text) in detector.normal_phrases:
            raise SystemExit(f"{text!r} equals a shipped phrase: it would not test the embedding")
    with stopwatch() as timing:
        refusal = np.array(detector.similarities(REFUSALS))
        answer = np.array(detector.similarities(ANSWERS))
    rows = []
    for t in np.round(np.arange(0.30, 0.901, 0.025), 3):
        caught = float((refusal > t).mean())
        false = float((answer > t).mean())
        rows.append(
            {
                "t": float(t),
                "refusals caught": caught,
                "answers taken for refusals": false,
                "balanced accuracy": (caught + 1 - false) / 2,
            }
        )
    best = max(row["balanced accuracy"] for row in rows)
    tied = [row["t"] for row in rows if row["balanced accuracy"] == best]
    chosen = float(np.round((tied[0] + tied[-1]) / 2, 3))
    hardest = sorted(zip(answer, ANSWERS, strict=True), reverse=True)[:5]
    weakest = sorted(zip(refusal, REFUSALS, strict=True))[:5]
    print(
        f"{len(REFUSALS)} refusals, {len(ANSWERS)} answers; embedder loaded in "
        f"{load['seconds']:.1f} s, {len(REFUSALS) + len(ANSWERS)} texts embedded in "
        f"{timing['seconds']:.2f} s"
    )
    for name, values in (("refusals", refusal), ("answers", answer)):
        print(
            f"{name}: similarity min {values.min():.3f}, median {np.median(values):.3f}, "
            f"max {values.max():.3f}"
        )
    print(table(rows, ["t", "refusals caught", "answers taken for refusals", "balanced accuracy"]))
    print(
        f"best balanced accuracy {best:.3f} for t in [{tied[0]}, {tied[-1]}]: chosen t = {chosen}"
    )
    print("answers closest to a refusal:", [(round(float(s), 3), a) for s, a in hardest])
    print("refusals farthest from the phrases:", [(round(float(s), 3), r) for s, r in weakest])
    data = {
        "refusals": len(REFUSALS),
        "answers": len(ANSWERS),
        "similarity": {"refusals": refusal.tolist(), "answers": answer.tolist()},
        "table": rows,
        "best_balanced_accuracy": best,
        "chosen_threshold": chosen,
        "embed_seconds": timing["seconds"],
    }
    print("saved", save("refusal_threshold", data, results))
    return data


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    measure(parser.parse_args().results)


if __name__ == "__main__":
    main()
