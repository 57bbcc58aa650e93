"""The linguistic libraries that replaced hand word lists (ADR 0086), and those that read typed
values from words (ADR 0158), read their data from their own wheels: in a fresh interpreter
where every socket refuses to connect, each loads and answers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PROBE = textwrap.dedent(
    """
    import json, socket

    def refuse(*args, **kwargs):
        raise OSError("network refused by the test")

    socket.socket.connect = refuse
    socket.create_connection = refuse

    from factledger.application.memory.inflection import fold_inflection
    from factledger.application.memory.scoring import STOPWORDS
    from factledger.application.recall.questions import field_label
    from factledger.application.recall.verbs import second_person
    from datetime import date
    from factledger.adapters.values.words import WordsValueReader
    from factledger.domain.values import ValueType, render

    def typed(kind, words):
        value = WordsValueReader().read(kind, words, said_on=date(2026, 3, 1))
        return None if value is None else render(value)

    print(json.dumps({
        "lemma": fold_inflection("warehouses"),
        "stopword": "the" in STOPWORDS,
        "verb": second_person("negotiates"),
        "acronym": field_label("crm_owner"),
        "date": typed(ValueType.DATE, "le neuf juin mille neuf cent soixante-huit"),
        "number": typed(ValueType.NUMBER, "dos dormitorios"),
        "money": typed(ValueType.MONEY, "300 libras esterlinas"),
    }))
    """
)


def test_the_libraries_answer_with_no_network() -> None:
    done = subprocess.run(  # noqa: S603 - this interpreter, a fixed probe, no shell
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "lemma": "warehouse",
        "stopword": True,
        "verb": "negotiate",
        "acronym": "CRM owner",
        "date": "1968-06-09",
        "number": "2",
        "money": "300 GBP",
    }
