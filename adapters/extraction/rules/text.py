"""Text helpers of the rule extractor: sentences, clauses, and first person turned into notes.

Notes are third person without a subject ("works with Supplier A"); where a pronoun must stay,
it becomes the neutral "the subject" / "their" / "them": nothing is inferred from names.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(]?[A-Z0-9])|\n+")
_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St|Prof|vs|etc|e\.g|i\.e|Inc|Ltd|Co)\.$")
_QUOTES = re.compile(r"[\"“”«»]|(?<!\w)'|'(?!\w)")
_MODALS = frozenset(
    [
        "can",
        "could",
        "will",
        "would",
        "should",
        "shall",
        "must",
        "might",
        "may",
        "was",
        "were",
        "had",
        "did",
        "went",
        "got",
        "made",
        "said",
        "saw",
        "took",
        "came",
        "thought",
        "felt",
        "found",
        "told",
        "gave",
        "kept",
        "left",
        "began",
        "became",
        # irregular pasts: "I ran 5 km" is "ran 5 km", never "rans"
        "ran",
        "met",
        "wrote",
        "won",
        "lost",
        "spent",
        "built",
        "brought",
        "paid",
        "sent",
        "grew",
        "bought",
        "sold",
        "drove",
        "flew",
        "swam",
        "ate",
        "drank",
        "sang",
        "wore",
        "forgot",
        "understood",
        "caught",
        "taught",
        "fought",
        "heard",
        "held",
        "stood",
        "sat",
        "slept",
        "woke",
        "chose",
    ]
)
_ADVERBS = frozenset(
    [
        "really",
        "just",
        "also",
        "always",
        "never",
        "still",
        "usually",
        "often",
        "recently",
        "finally",
        "actually",
        "now",
        "totally",
        "definitely",
        "already",
        "even",
        "only",
        "sometimes",
        "generally",
        "mostly",
        "currently",
        "basically",
        "absolutely",
    ]
)
_IRREGULAR = {"am": "is", "are": "is", "have": "has", "do": "does", "go": "goes", "be": "is"}
_CONTRACTIONS = {
    "'m": "is",
    "'ve": "has",
    "'d": "would",
    "'ll": "will",
    "'re": "is",
}
_NEGATIONS = {
    "don't": "does not",
    "do not": "does not",
    "didn't": "did not",
    "can't": "cannot",
    "won't": "will not",
    "haven't": "has not",
    "wasn't": "was not",
    "wouldn't": "would not",
    "couldn't": "could not",
    "am not": "is not",
}
_LEADING = re.compile(
    r"^(?:(?:and|but|so|also|well|actually|honestly),?\s+)?(?:I|we)(?P<contraction>'m|'ve|'d|'ll|'re)?\b\s*",
    re.IGNORECASE,
)
_OBJECT_PRONOUNS = [
    (re.compile(r"\bI'm\b"), "the subject is"),
    (re.compile(r"\bI've\b"), "the subject has"),
    (re.compile(r"\bI'd\b"), "the subject would"),
    (re.compile(r"\bI'll\b"), "the subject will"),
    (re.compile(r"\bI am\b"), "the subject is"),
    (re.compile(r"\bI\b"), "the subject"),
    (re.compile(r"\bwe\b", re.IGNORECASE), "they"),
    (re.compile(r"\b(?:my|our)\b", re.IGNORECASE), "their"),
    (re.compile(r"\b(?:me|us)\b", re.IGNORECASE), "them"),
    (re.compile(r"\b(?:mine|ours)\b", re.IGNORECASE), "theirs"),
    (re.compile(r"\b(?:myself|ourselves)\b", re.IGNORECASE), "themselves"),
]
_SECOND_PERSON = [
    (re.compile(r"\byour\b", re.IGNORECASE), "their"),
    (re.compile(r"\byou\b", re.IGNORECASE), "they"),
]


def sentences(text: str) -> list[str]:
    """Splits a message into sentences, keeping each one's final punctuation."""
    text = text.replace("\u2019", "'")  # typographic apostrophes, as phones type them
    pieces: list[str] = []
    for piece in (p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()):
        if pieces and _ABBREVIATION.search(pieces[-1]):
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    return pieces


def clean(text: str) -> str:
    """Drops quotation marks and collapses spaces and trailing clause punctuation."""
    text = _QUOTES.sub("", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" ,;:-\u2013\u2014").rstrip(".!")


def word_count(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9']+", text))


def third_person(text: str) -> str:
    """Rewrites a first-person statement of the subject as a note about them."""
    text = clean(text)
    leading = _LEADING.match(text)
    if leading:
        rest = text[leading.end() :]
        contraction = leading.group("contraction")
        if contraction:
            verb = _CONTRACTIONS[contraction.lower()]
            rest = f"{verb} {rest}" if rest else verb
        else:
            rest = conjugate(rest)
        text = rest
    text = _fix_negations(text)
    for pattern, replacement in _OBJECT_PRONOUNS:
        text = pattern.sub(replacement, text)
    return text


def second_to_third(text: str) -> str:
    """An agent's question about "you" turned into a note about the subject."""
    for pattern, replacement in _SECOND_PERSON:
        text = pattern.sub(replacement, text)
    return text


def conjugate(rest: str) -> str:
    """Puts the first verb of `rest` in the third person singular ("love it" -> "loves it")."""
    for negation, replacement in _NEGATIONS.items():
        if rest.lower().startswith(negation + " ") or rest.lower() == negation:
            return replacement + rest[len(negation) :]
    words = rest.split(" ")
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in _ADVERBS:
            continue
        words[index] = _third_singular(word)
        break
    return " ".join(words)


def _third_singular(word: str) -> str:
    lower = word.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower in _MODALS or lower.endswith(("ed", "'s")) or not lower.isalpha():
        return word
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return word + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _fix_negations(text: str) -> str:
    # Mid-sentence "I" followed by a verb: the verb agrees with "the subject" ("and I miss it"
    # -> "and the subject misses it"; "I don't" -> "the subject does not").
    text = re.sub(r"\bI (don't|do not)\b", "the subject does not", text)
    return _MID_I_VERB.sub(lambda m: f"the subject {conjugate(m.group(1))}", text)


_MID_I_VERB = re.compile(
    r"\bI ((?:(?:really|just|also|always|never|still|usually|often) )*[a-z]+)\b"
)


def value_key(value: str) -> str:
    """A stable, case-free key for a value, used in multi-valued slot names."""
    words = re.findall(r"[a-z0-9]+", value.lower())
    words = [w for w in words if w not in {"a", "an", "the", "my", "our", "their", "some"}]
    return "_".join(words[:4]) or "unknown"


def neutral_pronouns(text: str) -> str:
    """First-person pronouns anywhere in `text` replaced by neutral third-person ones."""
    text = _fix_negations(text)
    for pattern, replacement in _OBJECT_PRONOUNS:
        text = pattern.sub(replacement, text)
    return text


_EXPANSIONS = [
    (re.compile(r"\b(I|we|you|they)'ve\b", re.IGNORECASE), r"\1 have"),
    (re.compile(r"\b(I)'m\b", re.IGNORECASE), r"\1 am"),
    (re.compile(r"\b(we|you|they)'re\b", re.IGNORECASE), r"\1 are"),
    (re.compile(r"\b(I|we|you|they)'ll\b", re.IGNORECASE), r"\1 will"),
    (re.compile(r"\b(I|we|you|they)'d\b", re.IGNORECASE), r"\1 would"),
    (re.compile(r"\b(do|does|did|was|were|is|are|have|has|had)n't\b", re.IGNORECASE), r"\1 not"),
    (re.compile(r"\b(\w+)'s (been|got|gone)\b", re.IGNORECASE), r"\1 has \2"),
    (re.compile(r"\bcan't\b", re.IGNORECASE), "cannot"),
    (re.compile(r"\bwon't\b", re.IGNORECASE), "will not"),
]


def expand_contractions(text: str) -> str:
    """ "We've moved" -> "We have moved", so one slot pattern serves both spellings."""
    for pattern, replacement in _EXPANSIONS:
        text = pattern.sub(replacement, text)
    return text


_LEADING_SPEAKER = re.compile(
    r"^(?:(?:and|but|so|well|actually|also),?\s+)?(I|we)\b", re.IGNORECASE
)
_AND_PAST_VERB = re.compile(
    r"\b(and|then|but)( (?:then |also |now |later |recently )?)"
    r"(?=(?:[a-z]+ed|joined|left|began|became|bought|got|went|took|made|found|chose|sold)\b)",
    re.IGNORECASE,
)


def carry_speaker(text: str) -> str:
    """ "I left Hooli and joined Pied Piper" -> "... and I joined Pied Piper": a second verb
    keeps the speaker, so slot patterns (which need "I"/"we") see it."""
    leading = _LEADING_SPEAKER.match(text)
    if leading is None:
        return text
    speaker = "I" if leading.group(1) == "I" else "we"
    return _AND_PAST_VERB.sub(lambda m: f"{m.group(1)}{m.group(2).rstrip()} {speaker} ", text)


# "Kingfisher Metals?" asked of oneself, then "They're our main supplier."
_NAME_ASKED = re.compile(r"^(?-i:[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,3})\?$")
_POINTS_BACK = re.compile(r"^(?:they're|they are|it's|it is|that's|that is)\b", re.IGNORECASE)


def with_topic(asked: str, sentence: str) -> str:
    """The sentence with a pronoun that points at a name just asked replaced by the name."""
    if not _NAME_ASKED.match(asked.strip()) or not _POINTS_BACK.match(sentence):
        return sentence
    return _POINTS_BACK.sub(f"{asked.strip().rstrip('?')} is", sentence, count=1)
