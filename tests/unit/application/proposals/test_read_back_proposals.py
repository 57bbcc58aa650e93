"""A value the agent read back and the subject confirmed is proposed as stated (ADR 0138): its
evidence is the subject's confirming line, and its rationale names the agent's line too."""

from __future__ import annotations

from factledger.application.memory.extraction import ExtractedFact
from factledger.application.proposals.plan import change_id_for
from factledger.domain.provenance import Origin
from factledger.domain.transcript import Role
from factledger.testing.scripted_extractor import ScriptedExtractor

from .conftest import MODEL, Rig, day


async def test_a_confirmed_read_back_quotes_the_subjects_yes_and_names_the_agents_line(
    rig: Rig,
) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    lines = ((Role.AGENT, "So you buy from Northwind now?"), (Role.SUBJECT, "Yep. Since May."))
    read_back = ExtractedFact("r0", "Northwind", "supplier", (0, 1), value="Northwind", read_back=0)
    scripted.script("\n".join(text for _, text in lines), read_back)
    rig.record(lead, "s1", day(4, 2), *lines)

    await rig.worker(scripted).run_once()

    change = rig.subject(lead).changes[change_id_for(lead, "s1", MODEL, "supplier")]
    proposal = change.proposal
    assert proposal.origin is Origin.STATED
    assert proposal.evidence is not None
    assert (proposal.evidence.message_index, proposal.evidence.quote) == (1, "Yep.")
    assert proposal.rationale == (
        "new value of supplier: said by the agent (session s1, message 0), confirmed "
        "(session s1, message 1)"
    )
