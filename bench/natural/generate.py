"""Generates the natural-question set (`tests/data/natural_questions.yaml`) from a seed.

Each subject is a made-up customer with three sessions; some of their values change later
(city, employer, supplier, budget), so a question about them has a current answer and a stale
one. Every value belongs to one subject only, so a note naming another subject's value is a
cross-subject leak. Questions are worded as an agent would ask them mid-conversation; many
share no keyword with the sentence that holds the answer. The last third of the subjects is
held out and asked in wordings of their own (`HELD_OUT_WORDINGS`), never used for tuning.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

NAMES = ["Maria Okafor", "Tom Lindqvist", "Aiko Brandt", "Ravi Mehta", "Chloe Dubois",
         "Jonas Weber", "Lena Novak", "Omar Haddad", "Sofia Romano", "Pete Gallagher",
         "Ines Duarte", "Yuki Tanaka"]  # fmt: skip
CITIES = ["Porto", "Leeds", "Graz", "Utrecht", "Cork", "Bergen", "Turku", "Lyon", "Bilbao",
          "Gdansk", "Aarhus", "Brno", "Ghent", "Tallinn", "Split", "Malmo", "Basel", "Bremen",
          "Nantes", "Lucca", "Derry", "Kaunas", "Varna", "Oulu"]  # fmt: skip
EMPLOYERS = ["Northwind Logistics", "Globex", "Initech", "Hooli", "Vandelay Imports",
             "Pied Piper", "Soylent", "Wonka Foods", "Tyrell Systems", "Cyberdyne",
             "Oscorp", "Gringotts", "Monarch Labs", "Stark Freight", "Wayne Textiles",
             "Duff Brewing", "Virtucon", "Umbrella Health", "Acme Tools", "Bluth Homes",
             "Dunder Paper", "Sterling Media", "Prestige Worldwide", "Massive Dynamic"]  # fmt: skip
SUPPLIERS = ["Kestrel Packaging", "Bramble Boxes", "Fernhill Cartons", "Oakridge Wraps",
             "Silverline Crates", "Harbor Parcels", "Maple Mailers", "Copperleaf Packs",
             "Granite Tubes", "Willow Sacks", "Falcon Pallets", "Heron Cases", "Juniper Bags",
             "Lynx Liners", "Otter Boxes", "Pine Containers", "Quill Envelopes",
             "Raven Cartons", "Sparrow Packs", "Thistle Tins", "Umber Crates",
             "Vireo Wraps", "Wren Mailers", "Yarrow Tubs"]  # fmt: skip
PETS = ["Biscuit", "Pixel", "Juniper", "Mochi", "Pepper", "Waffles", "Ziggy", "Nutmeg",
        "Comet", "Tofu", "Marble", "Pickle"]  # fmt: skip
ANIMALS = ["dog", "cat", "dog", "cat", "parrot", "dog", "cat", "rabbit", "dog", "cat", "dog",
           "tortoise"]  # fmt: skip
HOBBIES = ["sailing", "climbing", "pottery", "chess", "birdwatching", "rowing", "baking",
           "fencing", "kayaking", "knitting", "archery", "gardening"]  # fmt: skip
ALLERGIES = ["peanuts", "shellfish", "gluten", "sesame", "penicillin", "kiwi", "dairy",
             "almonds", "soy", "eggs", "mustard", "celery"]  # fmt: skip
COURIERS = ["DPD", "DHL", "UPS", "FedEx", "GLS", "Evri", "PostNL", "Hermes", "TNT",
            "Aramex", "Chronopost", "Bpost"]  # fmt: skip
INSTRUMENTS = ["cello", "violin", "trumpet", "flute", "drums", "clarinet", "harp", "oboe",
               "banjo", "saxophone", "viola", "trombone"]  # fmt: skip

# topic -> (dev wordings, held-out wordings); `{name}` is the subject's first name.
DEV_WORDINGS: dict[str, list[str]] = {
    "city": ["Where is {name} based these days?", "Which town does the customer call home now?",
             "Where do they live at the moment?"],
    "employer": ["Who is {name}'s employer right now?", "Which company pays their salary?",
                 "Where does the customer work currently?"],
    "supplier": ["Which vendor handles their packaging now?", "Who provides their boxes today?",
                 "Which supplier do they work with at present?"],
    "budget": ["How much money can they spend per year?", "What's their annual spend limit?",
               "What is the budget the customer has?"],
    "pet": ["What's the name of {name}'s pet?", "Does the customer have an animal at home?",
            "What is their {animal} called?"],
    "hobby": ["What does {name} enjoy doing for fun?", "Any pastimes I could chat about?",
              "What's their favourite hobby?"],
    "allergy": ["Is there any food they must avoid?", "Anything that gives {name} a reaction?",
                "What are they allergic to?"],
    "courier": ["Which delivery firm sends out their orders?", "Who moves their parcels?",
                "Which courier do they ship with?"],
    "instrument": ["What instrument does the kid learn?",
                   "Which music lessons does the child take?", "What does their daughter play?"],
}  # fmt: skip
HELD_OUT_WORDINGS: dict[str, list[str]] = {
    "city": ["Remind me, what city is {name} in now?", "Where has the client settled?",
             "Which place should I send the visitor pack to?"],
    "employer": ["Who does {name} work for nowadays?", "Which firm employs them?",
                 "What organisation is the client with?"],
    "supplier": ["Where do they source packaging from now?", "Who ships them their cartons?",
                 "Which packaging partner do they rely on?"],
    "budget": ["What can the client afford yearly?", "How big is their budget now?",
               "How much have they set aside each year?"],
    "pet": ["Has {name} got a furry friend?", "What do they call their {animal}?",
            "Is there a companion animal in the household?"],
    "hobby": ["What does the client do on weekends?", "Which hobby does {name} have?",
              "What keeps them busy outside work?"],
    "allergy": ["Any dietary restrictions for lunch with {name}?", "What allergy do they have?",
                "Should the caterer leave anything out for them?"],
    "courier": ["Which shipping company carries their goods?", "What courier do they use?",
                "Who handles their outbound deliveries?"],
    "instrument": ["Does their little one make music?", "What does {name}'s daughter play?",
                   "Which instrument is the girl practising?"],
}  # fmt: skip
CHANGING = ("city", "employer", "supplier", "budget")
HELD_OUT_SHARE = 3  # every third subject, counted from the last, is held out


@dataclass(frozen=True, slots=True)
class Values:
    first: dict[str, str]  # the value first said, per topic
    later: dict[str, str]  # the value that superseded it (changing topics only)
    animal: str


def _values(index: int, rng: random.Random, pools: dict[str, list[str]]) -> Values:
    first = {topic: pool.pop() for topic, pool in pools.items()}
    later = {topic: pools[topic].pop() for topic in ("city", "employer", "supplier")}
    first["budget"] = f"{rng.randint(2, 9) * 5}k"
    later["budget"] = f"{int(first['budget'][:-1]) + rng.randint(2, 6) * 5}k"
    first.update(pet=PETS[index], hobby=HOBBIES[index], allergy=ALLERGIES[index],
                 courier=COURIERS[index], instrument=INSTRUMENTS[index])  # fmt: skip
    return Values(first, later, ANIMALS[index])


def _sessions(v: Values) -> list[dict[str, Any]]:
    f, later = v.first, v.later
    return [
        {"at": "2026-01-14T10:00:00+00:00", "lines": [
            ["agent", "Thanks for joining! Could you tell me a little about yourself?"],
            ["subject", f"I live in {f['city']}. I work at {f['employer']}."],
            ["agent", "And on the business side?"],
            ["subject", f"We work with {f['supplier']} for our boxes. "
                        f"Our budget is {f['budget']} a year."],
            ["subject", f"My {v.animal} is called {f['pet']}."]]},
        {"at": "2026-03-02T15:00:00+00:00", "lines": [
            ["agent", "Good to hear from you again."],
            ["subject", f"I'm allergic to {f['allergy']}. My favourite hobby is {f['hobby']}."],
            ["subject", f"We ship with {f['courier']}."],
            ["subject", f"I have moved to {later['city']}."]]},
        {"at": "2026-06-20T09:30:00+00:00", "lines": [
            ["agent", "What changed since we last spoke?"],
            ["subject", f"I work at {later['employer']} now. "
                        f"We now work with {later['supplier']}."],
            ["subject", f"Our budget is {later['budget']} a year now."],
            ["subject", f"My daughter plays the {f['instrument']}."]]},
    ]  # fmt: skip


def _questions(v: Values, name: str, wordings: dict[str, list[str]]) -> list[dict[str, Any]]:
    questions = []
    for topic, phrasings in wordings.items():
        current = v.later.get(topic, v.first[topic])
        stale = v.first[topic] if topic in CHANGING else None
        for text in phrasings:
            question: dict[str, Any] = {
                "topic": topic,
                "text": text.format(name=name.split()[0], animal=v.animal),
                "answer": current,
            }
            if stale is not None:
                question["stale"] = stale
            questions.append(question)
    return questions


def generate(seed: int = 14) -> dict[str, Any]:
    """The whole set as plain data, the same for the same seed."""
    rng = random.Random(seed)
    pools = {"city": CITIES[:], "employer": EMPLOYERS[:], "supplier": SUPPLIERS[:]}
    for pool in pools.values():
        rng.shuffle(pool)
    subjects = []
    for index, name in enumerate(NAMES):
        values = _values(index, rng, pools)
        held_out = (len(NAMES) - 1 - index) % HELD_OUT_SHARE == 0
        wordings = HELD_OUT_WORDINGS if held_out else DEV_WORDINGS
        subjects.append({
            "id": f"s{index:02d}",
            "name": name,
            "part": "heldout" if held_out else "dev",
            "sessions": _sessions(values),
            "questions": _questions(values, name, wordings),
        })  # fmt: skip
    return {"seed": seed, "subjects": subjects}


def write(path: Path, seed: int = 14) -> None:
    header = (
        "# Generated by factledger.bench.natural.generate (seed "
        f"{seed}); do not edit by hand.\n"
        "# Made-up subjects, written for this project; no third-party data.\n"
    )
    body = yaml.safe_dump(generate(seed), sort_keys=False, allow_unicode=True, width=100)
    path.write_text(header + body, encoding="utf-8")
