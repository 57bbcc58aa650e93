"""The contact-centre workload's conversations, and the rebuild bench's long transcripts and
figures."""

from __future__ import annotations

import random
import uuid

import pytest

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.ledger import Ledger
from factledger.bench.pgvector.contact_centre import TURN_WEIGHTS, conversations
from factledger.bench.write.rebuild import LONG_LINE, figures_printed, seed_ledger, transcript
from factledger.domain.events import SessionRecorded
from factledger.domain.transcript import Role


def _subjects(count: int) -> tuple[list[uuid.UUID], dict[uuid.UUID, list[str]]]:
    rnd = random.Random(1)
    subjects = [uuid.UUID(int=rnd.getrandbits(128)) for _ in range(count)]
    return subjects, {s: [f"fact {n} of {s.hex[:6]}" for n in range(5)] for s in subjects}


def test_each_conversation_takes_a_subject_no_earlier_one_took_and_most_turns_are_firsts() -> None:
    subjects, facts = _subjects(1_000)

    talks = conversations(subjects, facts, 600, random.Random(7))

    turns = sum(len(talk) for talk in talks)
    assert turns == 600
    firsts = [talk[0][0] for talk in talks]
    assert len(set(firsts)) == len(talks)  # every conversation meets its subject first
    assert all({subject for subject, _ in talk} == {talk[0][0]} for talk in talks)
    assert len(talks) / turns > 0.5  # most searches are a namespace's first
    assert any(len(talk) >= 4 for talk in talks)  # and some subjects are searched turn after turn
    assert {len(talk) for talk in talks} <= set(TURN_WEIGHTS)


def test_conversations_stop_when_the_subjects_run_out() -> None:
    subjects, facts = _subjects(10)

    talks = conversations(subjects, facts, 1_000, random.Random(7))

    assert len(talks) == 10


def test_a_long_transcript_takes_turns_and_a_short_one_is_one_line() -> None:
    long = transcript(40)

    assert len(long) == 40
    assert [m.role for m in long[:2]] == [Role.SUBJECT, Role.AGENT]
    assert all(m.text == LONG_LINE for m in long)
    assert len(transcript(1)) == 1
    assert transcript(1)[0].text != LONG_LINE


def test_the_seeded_log_records_sessions_of_the_lines_asked_for() -> None:
    ledger = Ledger(popo_env(), keys=InMemoryKeyStore())

    seed_ledger(ledger, 200, messages=12)

    stored = ledger.recorder.select_notifications(1, 1_000)
    events = [ledger.mapper.to_domain_event(n) for n in stored]
    sessions = [e for e in events if isinstance(e, SessionRecorded)]
    assert len(sessions) == 4  # 200 events, a session and 49 proposals per save
    assert all(len(e.transcript) == 12 for e in sessions)


def test_a_rebuilds_main_thread_is_blocked_for_the_wall_time_it_neither_ran_nor_queued() -> None:
    printed = "a migration's log line\n20020 2.5 0.9 0.35 0.3 1.2\n"

    figures = figures_printed("this", printed, "6.5/8.0/7.0")

    assert (figures.events, figures.seconds, figures.server_cpu_seconds) == (20020, 2.5, 0.35)
    assert (figures.main_ran_s, figures.main_queued_s) == (0.3, 1.2)
    assert figures.main_blocked_s == pytest.approx(1.0)
    assert figures.per_second == pytest.approx(8008)
