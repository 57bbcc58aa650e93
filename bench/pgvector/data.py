"""Synthetic subjects for `factledger-lab pgvector bench`: sentence-like facts, not random vectors.

Random vectors make ANN indexes look useless (see the embeddings reference), so every fact is
a sentence drawn from templates and embedded by the real embedder. Texts are distinct within
a namespace; namespaces share the sentence pool, the way many people share "drinks oat milk".
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

_TEMPLATES = (
    "Prefers {drink} in the {daypart} at {place}{when}",
    "Lives in {city} with a {pet} called {name}{when}",
    "Works as a {job} at a {company} in {city}{when}",
    "Has a budget of {amount} for the {project} starting in {month}{when}",
    "Is allergic to {food} and avoids {food2} at {place}{when}",
    "Drives a {colour} {car} to the office in {city}{when}",
    "Plays {sport} every {day} with {name}{when}",
    "Buys {product} from {supplier} every {period}{when}",
    "Wants to visit {country} in {month} with {name}{when}",
    "Their daughter {name} studies {subject} in {city}{when}",
    "Reads {genre} novels before bed on {day}{when}",
    "Celebrates their birthday in {month} with {food2} at {place}{when}",
    "Pays invoices by {payment} within {days} days for {product}{when}",
    "Prefers to be contacted by {channel} after {hour} on {day}{when}",
    "Is training for a {distance} run in {city} in {month}{when}",
    "Switched supplier for {product} to {supplier} in {month}{when}",
    "Keeps a {pet} and a {pet2} at home in {city}{when}",
    "Needs {product} delivered to {city} on {day} mornings{when}",
)
_VALUES = {
    "drink": "oat milk flat whites|green tea|black coffee|sparkling water|chai|hot chocolate",
    "daypart": "morning|afternoon|evening|late night",
    "city": "Leeds|Lisbon|Osaka|Toronto|Nairobi|Krakow|Austin|Porto|Bergen|Lyon|Dublin|Quito|"
    "Seville|Tampere|Cork|Busan|Adelaide|Durban|Calgary|Malmo",
    "when": "| since last year| for a few months now| these days| as of this spring"
    "| again recently",
    "place": "home|the office|the cafe downstairs|the gym|their parents' house|the club",
    "pet": "dog|cat|parrot|rabbit|tortoise|hamster",
    "pet2": "goldfish|gecko|ferret|canary",
    "name": "Ana|Kofi|Mei|Lars|Priya|Tomas|Aisha|Jonah|Ines|Ravi|Zofia|Omar|Lucia|Bram|Yuki|"
    "Nadia|Felix|Amara|Hugo|Leila",
    "job": "nurse|carpenter|data analyst|baker|pilot|teacher|accountant|architect|chef",
    "company": "bakery|hospital|logistics firm|school|law office|bike shop|startup",
    "amount": "5k|12k|20k|30k|45k|80k|150k",
    "project": "warehouse refit|new website|kitchen|fleet upgrade|marketing push|roof repair",
    "food": "peanuts|shellfish|gluten|dairy|sesame|kiwi",
    "food2": "spicy food|raw onions|mushrooms|red meat",
    "colour": "red|blue|silver|black|green|white",
    "car": "hatchback|estate car|electric van|pickup|convertible",
    "sport": "tennis|padel|football|chess|badminton|squash|climbing",
    "day": "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday",
    "product": "packaging|coffee beans|flour|printer paper|cleaning supplies|spare parts",
    "supplier": "Supplier A|Northwind|Acme Trading|Blue Harbour|Greenfield Co|Tidewater",
    "period": "week|fortnight|month|quarter",
    "country": "Japan|Peru|Iceland|Morocco|Vietnam|Norway|Chile|Greece",
    "month": "January|March|April|June|August|September|November|December",
    "subject": "medicine|law|physics|music|architecture|economics",
    "genre": "crime|science fiction|historical|fantasy|romance",
    "payment": "bank transfer|card|direct debit|cheque",
    "days": "7|14|30|45|60",
    "channel": "email|phone|WhatsApp|text message",
    "hour": "9am|noon|5pm|6pm|8pm",
    "distance": "5k|10k|half marathon|marathon",
}
_QUESTION_PREFIXES = ("what do we know about how it", "does the customer say it", "remind me:")


@dataclass(frozen=True, slots=True)
class Tier:
    """`namespaces` subjects holding `facts` facts each, drawn from the sentence pool."""

    name: str
    namespaces: int
    facts: int


def sentence_pool(size: int, seed: int) -> list[str]:
    """`size` distinct sentences; refuses a size the templates cannot supply."""
    values = {k: v.split("|") for k, v in _VALUES.items()}
    if size > template_space(values):
        raise ValueError(f"at most {template_space(values)} distinct sentences")
    rnd = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < size:
        template = rnd.choice(_TEMPLATES)
        seen[template.format(**{k: rnd.choice(v) for k, v in values.items()})] = None
    return list(seen)


def template_space(values: dict[str, list[str]]) -> int:
    """How many distinct sentences the templates can make (sampling slows near the limit)."""
    total = 0
    for template in _TEMPLATES:
        combos = 1
        for name in {f[1] for f in string.Formatter().parse(template) if f[1]}:
            combos *= len(values[name])
        total += combos
    return total // 4  # stay well below the limit, where rejection sampling stays cheap


def assign(tier: Tier, pool_size: int, rnd: random.Random) -> list[list[int]]:
    """Pool indexes per namespace: distinct within a namespace when the pool is big enough."""
    if tier.facts <= pool_size:
        return [rnd.sample(range(pool_size), tier.facts) for _ in range(tier.namespaces)]
    return [[rnd.randrange(pool_size) for _ in range(tier.facts)] for _ in range(tier.namespaces)]


def question(fact: str, rnd: random.Random) -> str:
    """A query about a fact, worded differently (lower case, first word dropped, a prefix)."""
    words = fact.lower().split()
    return f"{rnd.choice(_QUESTION_PREFIXES)} {' '.join(words[1:])}"
