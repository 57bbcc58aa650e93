"""The forget-field head's examples: each request to forget of the training conversations,
the sentence it is said in, and the field it concerns (or none: something that is no
profile field).

The field head reads which field a clause *states*; a request names what it wants gone
("the bit about my partner's job", "that address"), often without its value, and a request
about something that is no field must place nowhere. So the field a request concerns is a
head of its own, over the same (clause, field) pairs, fitted on requests alone: a clause
of the request overlapping its labelled words concerns its field, the request's other
clauses (and a request about no field) concern none.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factledger.adapters.judgement.judge import LearnedJudge
from factledger.bench.judgement.conversations import TrainingCase, sentence_around
from factledger.bench.judgement.field_data import ClauseExample
from factledger.domain.transcript import Message, Role


async def forget_field_examples(
    judge: LearnedJudge, cases: Sequence[TrainingCase]
) -> list[ClauseExample]:
    out: list[ClauseExample] = []
    for number, case in enumerate(cases):
        fields = list(case.fields)
        for session in case.sessions:
            for request in session.forgets:
                line = session.lines[request.line][1]
                sentence = sentence_around(line, request.start)
                said, pairs = await judge.pairs([Message(Role.SUBJECT, sentence)], fields)
                offset = max(line.find(sentence), 0)
                a = request.start - offset
                b = a + len(request.text)
                cursor = 0
                for c, (_, clause) in enumerate(said):
                    start = max(sentence.find(clause, cursor), 0)
                    end = cursor = start + len(clause)
                    states = np.zeros(len(fields), dtype=bool)
                    if request.field in fields and a < end and b > start:
                        states[fields.index(str(request.field))] = True
                    out.append(ClauseExample(number, pairs[c], states))
    return out
