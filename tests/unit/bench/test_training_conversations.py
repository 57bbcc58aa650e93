"""Labelled training conversations: validated as they load, imported verbatim."""

from __future__ import annotations

from pathlib import Path

from factledger.bench.judgement.conversations import load_training_cases
from factledger.bench.judgement.importing import import_conversations

CASES = """\
- id: gym-t-001
  domain: gym
  kind: member
  fields:
    membership_plan: "the plan the member pays for"
    goals: "list: what the member trains for"
  tags: [update]
  sessions:
    - at: "2026-01-12T10:00:00Z"
      channel: chat
      lines:
        - {role: agent, text: "Which plan are you on?"}
        - {role: subject, text: "the off-peak one, and I want to run a half marathon"}
        - {role: agent, text: "Great."}
      expect:
        proposals:
          - {field: membership_plan, line: 1, span: "the off-peak one", value: "off-peak",
             origin: stated, hedged: false, correction: false}
          - {field: goals, line: 1, span: "a full marathon", value: "marathon",
             origin: stated, hedged: false, correction: false}
          - {field: goals, line: 2, span: "Great", value: "x", origin: stated,
             hedged: false, correction: false}
          - {field: weight, line: 1, span: "the off-peak one", value: "x", origin: stated,
             hedged: false, correction: false}
        not_proposed: []
        forget_requests: []
      questions:
        - {text: "What is the member training for?", field: goals, answer_keywords: ["half"],
           stale_keywords: []}
"""


def test_a_span_not_in_its_subject_line_is_dropped_and_counted(tmp_path: Path) -> None:
    (tmp_path / "cases-gym.yaml").write_text(CASES, encoding="utf-8")

    loaded = load_training_cases([tmp_path])

    (case,) = loaded.cases
    (session,) = case.sessions
    assert [(p.span.field, p.span.text, p.span.start) for p in session.proposals] == [
        ("membership_plan", "the off-peak one", 0)
    ]
    assert loaded.dropped == {
        "proposal: span not in its line": 1,
        "proposal: not a subject line": 1,
        "proposal: field not in the domain's fields": 1,
    }
    assert case.is_list("goals")
    assert not case.is_list("membership_plan")
    assert session.questions[0].field == "goals"


def test_import_copies_readable_files_and_leaves_a_chunk_still_being_written(
    tmp_path: Path,
) -> None:
    source, into = tmp_path / "writer", tmp_path / "corpus"
    source.mkdir()
    (source / "cases-gym.yaml").write_text(CASES, encoding="utf-8")
    (source / "cases-gym-2.yaml").write_text("- id: gym-t-002\n  sessions: [\n", encoding="utf-8")

    report = import_conversations(source, into)

    assert report["copied"] == ["cases-gym.yaml"]
    assert report["not_readable"] == ["cases-gym-2.yaml"]
    assert report["cases"] == 1
    assert report["proposals"] == 1
    assert (into / "cases-gym.yaml").read_text(encoding="utf-8") == CASES
