"""`python -m factledger.bench.judgement train --corpus DIR`: offline, numpy only, and the
file it writes carries a span tagger that tags the values its conversations labelled."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import PACKAGED_HEADS, LearnedJudge
from factledger.bench.judgement.__main__ import main
from factledger.domain.transcript import Message, Role

SENTENCES = """\
- labels: {statement: self}
  texts: ["I work at Norrtek.", "We use Fibrelink now.", "My plan is the gold one.",
          "I live in Tarnow.", "Our team is nine people.", "I drive a Corolla."]
- labels: {statement: third_party}
  texts: ["My wife works at Brightline.", "My boss drives a Volvo.", "His team uses Slack.",
          "My son lives in Oslo.", "Her plan is silver.", "Our neighbour has a dog."]
- labels: {statement: small_talk}
  texts: ["Lovely weather today.", "Haha thanks!", "How was your weekend?", "Cheers mate.",
          "Sorry, long day.", "Nice to meet you."]
- labels: {statement: question}
  texts: ["What does the gold plan cost?", "Can I pay monthly?", "Do you ship to Riga?",
          "Is there a discount?", "When do you open?", "Who do I call?"]
- labels: {statement: self, hedged: true, correction: true, forget: true}
  texts: ["Maybe delete my number, I think.", "Please forget my address, probably.",
          "Actually I might want you to wipe that.", "Scrap my phone, perhaps.",
          "Probably best you drop my email, sorry I said it.", "I think remove my card."]
"""
ANSWERS = """\
- label: "yes"
  replies: ["Yes, that's right.", "Yep.", "Correct.", "Exactly.", "Yes please.", "Right."]
- label: "no"
  replies: ["No, that's wrong.", "Nope.", "Not at all.", "No.", "Wrong.", "No way."]
- label: neither
  replies: ["Hmm, let me check.", "Why?", "Later.", "Not sure.", "Who knows.", "Hold on."]
"""


def _case(number: int, plan: str, city: str) -> str:
    return f"""\
- id: gym-t-{number:03d}
  domain: gym
  kind: member
{
        '''  fields:
    membership_plan: "the plan the member pays for"
    home_city: "where the member lives"
'''
        if number == 0
        else ""
    }  sessions:
    - at: "2026-01-12T10:00:00Z"
      channel: chat
      lines:
        - {{role: agent, text: "Which plan are you on, and where do you live?"}}
        - {{role: subject, text: "I'm on the {plan} plan and I live in {city}, lovely weather"}}
      expect:
        proposals:
          - {{field: membership_plan, line: 1, span: "{plan}", value: "{plan}",
             origin: stated, hedged: false, correction: false}}
          - {{field: home_city, line: 1, span: "{city}", value: "{city}",
             origin: stated, hedged: false, correction: false}}
    - at: "2026-02-12T10:00:00Z"
      channel: chat
      lines:
        - {{role: subject, text: "Thanks. {FORGETS[number % 2][0]}"}}
      expect:
        forget_requests:
          - {{line: 0, span: "{FORGETS[number % 2][1]}", field: {FORGETS[number % 2][2]}}}
"""


# A request to forget, its words naming what, and the field it concerns.
FORGETS = [
    ("Please delete where I live from your records.", "where I live", "home_city"),
    ("Could you erase the membership I pay for from my file?", "the membership", "membership_plan"),
]


PLANS = ["gold", "silver", "off-peak", "student", "family", "platinum", "basic", "flex"]
CITIES = ["Tarnow", "Lyon", "Porto", "Kaunas", "Leeds", "Graz", "Turku", "Bilbao"]


def test_train_fits_every_head_and_a_span_tagger_from_one_corpus_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "conversations").mkdir(parents=True)
    (corpus / "sentences.yaml").write_text(SENTENCES, encoding="utf-8")
    (corpus / "answers.yaml").write_text(ANSWERS, encoding="utf-8")
    cases = "".join(_case(i, PLANS[i % 8], CITIES[(i * 3) % 8]) for i in range(24))
    (corpus / "conversations" / "cases-gym.yaml").write_text(cases, encoding="utf-8")
    out = tmp_path / "heads.npz"

    main(["train", "--corpus", str(corpus), "--out", str(out)])

    report = json.loads(capsys.readouterr().out)
    assert report["span_conversations"] == 24
    assert report["span_labels_dropped"] == {}
    heads = Heads.load(out, report["sha256"])
    assert "span" in heads.heads
    judge = LearnedJudge(OnnxEmbedder(), heads)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    said = [
        Message(Role.AGENT, "Which plan are you on, and where do you live?", at),
        Message(Role.SUBJECT, "I'm on the silver plan and I live in Porto, lovely weather", at),
    ]
    spans = asyncio.run(judge.value_spans(said, ["membership_plan", "home_city"], every=True))
    best = {
        f: max((s for s in spans if s.field == f), key=lambda s: s.p).clause
        for f in ("membership_plan", "home_city")
        if any(s.field == f for s in spans)
    }
    assert best == {"membership_plan": "silver", "home_city": "Porto"}
    assert "forget_field" not in heads.heads  # ADR 0172: no head reads it


def _sentences_and_answers(tmp_path: Path) -> Path:
    """A corpus directory of this module's labelled sentences and replies."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "sentences.yaml").write_text(SENTENCES, encoding="utf-8")
    (corpus / "answers.yaml").write_text(ANSWERS, encoding="utf-8")
    return corpus


def test_forget_refits_the_forget_flag_alone_and_keeps_every_other_head_of_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _sentences_and_answers(tmp_path)
    out = tmp_path / "heads.npz"

    main(["forget", "--corpus", str(corpus), "--onto", str(PACKAGED_HEADS), "--out", str(out)])

    report = json.loads(capsys.readouterr().out)
    assert report["requests"] == 6
    refit, shipped = Heads.load(out, report["sha256"]), Heads.load(PACKAGED_HEADS, None)
    assert refit.forget_min == report["forget_min"]
    assert not np.array_equal(refit["forget"].weights, shipped["forget"].weights)
    for name, head in shipped.heads.items():
        if name != "forget":
            assert np.array_equal(refit[name].weights, head.weights), name
            assert refit[name].classes == head.classes
    assert (refit.field_min, refit.yes_min) == (shipped.field_min, shipped.yes_min)
    judged = asyncio.run(
        LearnedJudge(OnnxEmbedder(), refit).judge(["Please forget my address, probably."])
    )
    assert judged[0].forget_request


def test_forget_learns_the_asking_sentence_of_a_writers_lines_and_no_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _sentences_and_answers(tmp_path)
    asks = ["Kindly scrub my gym locker code from your notes."] * 6
    lines = [
        {
            "id": f"w-{i}",
            "language": "en",
            "domain": "gym",
            "request": True,
            "text": f"The class on Friday was great. {ask}",
            "request_sentence": ask,
        }
        for i, ask in enumerate(asks)
    ]
    written = tmp_path / "lines-01.yaml"
    written.write_text(json.dumps(lines), encoding="utf-8")  # JSON is YAML
    out = tmp_path / "heads.npz"

    main(
        [
            "forget",
            "--corpus",
            str(corpus),
            "--onto",
            str(PACKAGED_HEADS),
            "--out",
            str(out),
            "--lines",
            str(written),
        ]
    )

    report = json.loads(capsys.readouterr().out)
    assert report["line_sentences"] == 12  # each message cut in two, one piece asking
    assert report["requests"] == 6 + 6
    judge = LearnedJudge(OnnxEmbedder(), Heads.load(out, report["sha256"]))
    judged = asyncio.run(judge.judge(["Kindly scrub my gym locker code from your notes."]))
    assert judged[0].forget_request
