"""Background prose for the demo world, written for this project from fixed templates."""

from __future__ import annotations

import random

SENTENCES = [
    "The market square of {place} fills with traders every spring.",
    "Travellers describe {place} as quiet in winter and crowded in summer.",
    "Records from {year} mention a long dispute over grazing rights near {place}.",
    "The old bridge at {place} was rebuilt after a flood damaged its arches.",
    "Local farmers grow barley, beans and apples on the slopes around {place}.",
    "A small museum in {place} keeps maps, coins and letters from earlier centuries.",
    "The {group} meets each autumn to discuss trade, roads and harvests.",
    "Members of the {group} keep careful ledgers of their shared accounts.",
    "According to a survey of {year}, most households kept goats or sheep.",
    "The river valley is known for its mild weather and fertile soil.",
    "Stone from nearby quarries was carried by cart to the coastal towns.",
    "Festivals with music and dancing mark the end of the harvest season.",
    "A chronicle written in {year} praises the skill of the local weavers.",
    "The road between {place} and the hills was paved during a dry summer.",
    "Several families from {place} moved to the coast in search of work.",
    "The library of the {group} holds copies of early charters and deeds.",
    "Fishing boats leave the harbour before dawn and return by midday.",
    "Painters often visited the valley to study its light and colours.",
    "In {year} a new school opened with two classrooms and a small garden.",
    "The northern provinces are known for their wool and their strong cheese.",
]
VOCABULARY = {
    word.strip(".,").lower()
    for sentence in SENTENCES
    for word in sentence.replace("{", " ").replace("}", " ").split()
}


def paragraph(rng: random.Random, places: list[str], groups: list[str], sentences: int) -> str:
    """A paragraph of `sentences` template sentences about random places and groups."""
    return " ".join(
        rng.choice(SENTENCES).format(
            place=rng.choice(places), group=rng.choice(groups), year=rng.randint(1650, 1950)
        )
        for _ in range(sentences)
    )


def paragraphs(
    rng: random.Random, places: list[str], groups: list[str], count: int, sentences: int = 4
) -> list[str]:
    """`count` filler paragraphs."""
    return [paragraph(rng, places, groups, sentences) for _ in range(count)]
