"""Question templates of the demo world: a question, its fact sentence, and side mentions."""

from __future__ import annotations

import random
from dataclasses import dataclass

from tipqa.sources.demo.names import NameMaker


@dataclass(frozen=True)
class Fact:
    """One question's material: every sentence the world may place in documents."""

    question: str
    answer: str
    aliases: list[str]
    keyword: str
    statement: str
    reordered: str | None
    subject_mentions: list[str]
    answer_mentions: list[str]


def birthplace(names: NameMaker, rng: random.Random) -> Fact:
    """'In which city was X born?', answered by a made-up city."""
    first, last, city = names.word(), names.word(), names.word()
    person = f"{first} {last}"
    return Fact(
        question=f"In which city was {person} born?",
        answer=city,
        aliases=[city, f"City of {city}"],
        keyword=person,
        statement=f"{person} was born in {city}.",
        reordered=f"{last}, {first} was born in the city of {city}.",
        subject_mentions=[
            f"{person} was a well-known figure in the northern provinces.",
            f"Letters written by {person} survive in several archives.",
            f"Many stories are told about {person} and the long journeys of youth.",
        ],
        answer_mentions=[
            f"{city} is a city with a busy harbour and narrow streets.",
            f"Merchants from {city} traded wool and salt.",
            f"The walls of {city} were repaired after a storm.",
        ],
    )


def death_year(names: NameMaker, rng: random.Random) -> Fact:
    """'In which year did X die?', answered by a year outside the filler's range."""
    first, last = names.word(), names.word()
    person = f"{first} {last}"
    year = str(rng.randint(1450, 1640))
    return Fact(
        question=f"In which year did {person} die?",
        answer=year,
        aliases=[year],
        keyword=person,
        statement=f"{person} died in {year}.",
        reordered=f"{last}, {first} died in the year {year}.",
        subject_mentions=[
            f"{person} kept a workshop near the river for many years.",
            f"Portraits of {person} hang in two provincial halls.",
        ],
        answer_mentions=[
            f"The winter of {year} was long and cold.",
            f"A great fair was held in the spring of {year}.",
        ],
    )


def author(names: NameMaker, rng: random.Random) -> Fact:
    """'Who wrote the novel "T"?', answered by a made-up writer."""
    title = f"The {names.word()} of {names.word()}"
    first, last = names.word(), names.word()
    person = f"{first} {last}"
    return Fact(
        question=f'Who wrote the novel "{title}"?',
        answer=person,
        aliases=[person, last],
        keyword=title,
        statement=f'"{title}" is a novel written by {person}.',
        reordered=None,
        subject_mentions=[
            f'Critics still argue about the ending of "{title}".',
            f'A new edition of "{title}" appeared with fresh illustrations.',
        ],
        answer_mentions=[
            f"{person} spent many years living by the sea.",
            f"{person} corresponded with printers in three countries.",
        ],
    )


def founder(names: NameMaker, rng: random.Random) -> Fact:
    """'Who founded the X Trading Company?', answered by a made-up merchant."""
    company = f"{names.word()} Trading Company"
    first, last = names.word(), names.word()
    person = f"{first} {last}"
    return Fact(
        question=f"Who founded the {company}?",
        answer=person,
        aliases=[person, last],
        keyword=company,
        statement=f"The {company} was founded by {person}.",
        reordered=None,
        subject_mentions=[
            f"The {company} owned warehouses along the river.",
            f"Ships of the {company} carried timber and salt.",
        ],
        answer_mentions=[
            f"{person} was known as a careful and patient merchant.",
            f"{person} travelled widely before settling inland.",
        ],
    )


TEMPLATES = [birthplace, death_year, author, founder]
PERSON_SUBJECT = [birthplace, death_year]
