"""Fact extraction: the extractor and the guidance it follows per conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
)

from factledger.api.settings.base import NestedSettings
from factledger.domain.transcript import Channel

# -- fact extraction ---------------------------------------------------------------------------


class RuleExtractorSettings(NestedSettings):
    """The rules alone (the default before ADR 0119): deterministic, offline extraction driven
    by a guidance YAML file (slots, trigger phrases, derivation rules); without
    `guidance_path`, the packaged guidance."""

    kind: Literal["rule"] = "rule"
    guidance_path: Path | None = None


class OpenAICompatibleExtractorSettings(NestedSettings):
    """Any OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, vLLM, llama.cpp);
    `base_url` ends before `/chat/completions` (usually with `/v1`). The instructions come from
    `prompt_path`, else from the guidance file's `llm_instructions`."""

    kind: Literal["openai_compatible"] = "openai_compatible"
    base_url: str = Field(pattern=r"^https?://[^\s]+$")
    model: str = Field(min_length=1, max_length=200)
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    temperature: float = Field(default=0.0, ge=0, le=2)
    response_format: Literal["json_schema", "json_object"] = "json_schema"
    guidance_path: Path | None = None
    prompt_path: Path | None = None


# A component's file, floor or reader, the switch that turns the component off, its value when
# off, and what the refusal asks for instead (`LearnedExtractorSettings._only_where_it_is_read`).
_READ_ONLY_WHEN: dict[str, tuple[str, object, str]] = {
    "read_back_yes": ("read_backs", False, "read_backs true"),
    "read_back_floor": ("read_backs", False, "read_backs true"),
    "forget_reader_path": ("forget_reader", "none", "forget_reader 'default'"),
    "held_change_path": ("qa_reader_held_change", False, "qa_reader_held_change unset or true"),
    "held_change_min": ("qa_reader_held_change", False, "qa_reader_held_change unset or true"),
    "answer_stance_path": ("answer_stance", "none", "answer_stance 'learned'"),
    "value_fit_path": ("value_fit", "none", "value_fit unset or 'learned'"),
    "value_fit_held_min": ("value_fit", "none", "value_fit unset or 'learned'"),
    "qa_reader_agreement_floor": ("qa_reader_agreement", False, "qa_reader_agreement true"),
}


class LearnedExtractorSettings(NestedSettings):
    """The default (ADR 0119): the rules' candidate facts judged sentence by sentence by
    learned heads over the packaged sentence embedder: a third party's fact, small talk, a
    question or a request to forget proposes nothing. `heads_path` (with its pinned
    `heads_sha256`) replaces the shipped heads with a deployment's own (`python -m
    factledger.bench.judgement train`)."""

    kind: Literal["learned"] = "learned"
    guidance_path: Path | None = None
    # Who proposes the candidates the learned parts judge: `rules`, the rule extractor's facts
    # (ADR 0119); `sentences`, no rule at all (ADR 0125): each of the subject's sentences is a
    # candidate memory the heads keep or drop, and the QA reader alone reads the fields;
    # `rules_and_sentences`, the rules' facts and, for the memory backend, every sentence of
    # the subject's no rule fact stands on (ADR 0157; the proposals are the rules' alike).
    candidates: Literal["rules", "sentences", "rules_and_sentences"] = "rules"
    heads_path: Path | None = None
    heads_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    # A reader of requests to forget beside the heads' forget flag (ADR 0165, 0166): a
    # sentence the flag reads at the reader's gate or above asks to forget when the reader, a
    # fine-tuned encoder, reads it so too. `default`: the shipped reader with the shipped
    # heads; with a deployment's heads, its own reader (`forget_reader_path`, pinned by
    # SHA-256: `python -m factledger.bench.judgement.forget_reader fit` writes the heads file
    # and the reader fitted beside it) or none. `none`: the flag alone, at its `forget_min`.
    forget_reader: Literal["default", "none"] = "default"
    forget_reader_path: Path | None = None
    forget_reader_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    # Which reader finds the kind's fields the rules fed nothing (ADR 0107): `qa_reader`, the
    # one-pass QA reader (int8 ONNX), the shipped file or a deployment's own (`python -m
    # factledger.bench.judgement.qa_reader train --export`) pinned by SHA-256, its answers kept
    # from `qa_reader_floor` over "no value" (the floor its card names; for the shipped file,
    # its own); `heads`, the clause reader of the heads above (the default before ADR 0107).
    # A list field's answers are kept from `qa_reader_list_floor` (ADR 0113; the card's
    # `list_floor`; for the shipped file, its own; for a deployment's file without it, its
    # `qa_reader_floor`).
    field_reader: Literal["heads", "qa_reader"] = "qa_reader"
    qa_reader_path: Path | None = None
    qa_reader_sha256: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{64}$", validate_default=True
    )
    qa_reader_floor: float | None = Field(default=None, ge=-20, le=20, validate_default=True)
    qa_reader_list_floor: float | None = Field(default=None, ge=-20, le=20)
    # A list field's spans measured by the probability mass of all the items its line states,
    # not by one item's share of it (ADR 0129); the shipped file's list floor is then the one
    # fitted so; a deployment's own file needs a list floor fitted with `--spread-lists`.
    qa_reader_list_spread: bool = False
    # A list field's span cut into its items where the reader reads one item end and the
    # next begin ("Sertraline, a hundred milligrams. And omeprazole" is two medications, not
    # one: ADR 0162). Read off the scores every file gives, so a deployment's file needs
    # nothing fitted for it. Off: on the halves no cut was chosen on it parted 43 in 100
    # merged items where its rule asked half (ADR 0163; every other figure about unchanged).
    qa_reader_list_cuts: bool = False
    # A single-valued field the subject holds a statement of already (the profile's value, a
    # pending or superseded change) is read from `qa_reader_held_floor`: a session stating it
    # again is where an update is said (ADR 0128). For the shipped file, its own; for a
    # deployment's file without it, its `qa_reader_floor`.
    qa_reader_held_floor: float | None = Field(default=None, ge=-20, le=20)
    # How far under its best pair's score a wider span holding it, in the same sentence, may
    # score and be a single-valued field's answer instead (ADR 0227: "Boots at Whiteladies
    # Road", not "Whiteladies Road"); 0 takes the best pair as it is. Unset: the shipped
    # file's own (0.5, chosen on its kept-out cases); a deployment's file's, 0.
    qa_reader_span_slack: float | None = Field(default=None, ge=0, le=10)
    # Each window of a line read on its own rather than batched with the session's other
    # lines, whose activation range the int8 graph shares (ADR 0155's defect): the reading is
    # then the line's own, at about the same CPU. The shipped file reads so at floors chosen
    # on reads made alone (ADR 0156); a deployment's file keeps the floors it is given. Off
    # by default: at those floors ADR 0156 measured it less precise on new writers.
    qa_reader_alone: bool = False
    # The bar on the reader's best margin at which a request to forget speaks of a field
    # (ADR 0218, with the proposals' `forget_placement_mentions`): unset, the packaged file's
    # own; a deployment's file without one places requests by closeness alone.
    qa_reader_mention_floor: float | None = Field(default=None, ge=-100, le=20)
    # Which answer of such a held field a session proposes: `best`, its most probable, as for
    # any field; `latest`, the latest said over the floor (ADR 0128).
    held_answer: Literal["best", "latest"] = "best"
    # Such a held field's answers under the held floor, from the pair head's bar, kept where
    # the pair head reads their sentence as stating another value than the words held (ADR
    # 0137, 0145): the shipped head (`python -m factledger.bench.judgement.held_change`) over the
    # heads' embedder, or a deployment's own pinned by SHA-256. Read only with the QA reader,
    # without the heads' agreement. Unset: on with the packaged QA reader, off with a
    # deployment's reader file, whose margins the shipped head (fitted on the packaged
    # reader's) does not know, unless a held-change file of its own is given (as for the
    # value-fit head); `true` or `false` decides either way.
    qa_reader_held_change: bool | None = None
    held_change_path: Path | None = None
    held_change_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    # The smallest probability of a change the head keeps such an answer from. Unset: the
    # file's own (`changed_min`, 0.9 in the shipped file, chosen on kept-out training cases
    # for precision alone). ADR 0233: at 0.7 beside `value_fit_held_min` 0.5, more updates on
    # every judge, but more precision lost than its rule allowed; a setting, not the default.
    held_change_min: float | None = Field(default=None, ge=0, le=1)
    # A floors file of a deployment's own (`python -m
    # factledger.bench.judgement.qa_reader.field_floors`, ADR 0152), pinned by SHA-256: each
    # field it names reads from its own floor; the file names the reader file it was fitted
    # for and is refused beside another. None ships: the packaged reader's fitted floors
    # failed their adoption rule on writers the fit never read.
    field_floors_path: Path | None = None
    field_floors_sha256: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{64}$", validate_default=True
    )
    # Whether the QA reader's answers are read for whether their sentence states the value
    # (ADR 0121): `learned`, the shipped stance head or a deployment's own (`python -m
    # factledger.bench.judgement.stance --out FILE`) pinned by SHA-256; `none`, every answer
    # over the floor is kept, the default: the stance bought about 0.01 of precision for
    # 1.9x the extractor's CPU and fewer updates recognised (ADR 0121, as merged). Read only
    # with the QA reader.
    answer_stance: Literal["learned", "none"] = "none"
    answer_stance_path: Path | None = None
    answer_stance_sha256: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{64}$", validate_default=True
    )
    # Whether the QA reader's answers of a field the subject holds nothing of are read
    # against what values of that field look like (ADR 0211): `learned`, the shipped
    # value-fit head (a bank of the training conversations' labelled values by field, and a
    # regression over its closeness and the reader's margin) or a deployment's own (`python
    # -m factledger.bench.judgement.value_fit --out FILE`) pinned by SHA-256: an answer over
    # its bar is kept unless the head doubts it, one under it (by the file's reach) where the
    # head is sure; `none`, the reader's bars alone. Unset: on with the packaged QA reader
    # (ADR 0223: on the held-out halves more facts at the same precision), off with a
    # deployment's reader file (the shipped head reads the packaged reader's margins) unless
    # a value-fit file of its own is given, and off beside the heads' agreement or
    # read-backs (`read_backs`), neither ever measured with it: with read-backs, an answer it
    # admits under the floor ("I'll think about it." as a plan) stands where the value the
    # subject confirmed would have. Read only with the QA reader, without the heads'
    # agreement (`qa_reader_agreement`).
    value_fit: Literal["learned", "none"] | None = None
    value_fit_path: Path | None = None
    value_fit_sha256: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{64}$", validate_default=True
    )
    # The value-fit head's bar for a held field's answers (ADR 0231): an update whose words the
    # head reads under it ("Same address", "Budget as before") is dropped. Unset: none, held
    # answers pass as read (at 0.5 the twelve held-out halves gained 0.0016 of precision where
    # ADR 0231 asked 0.002).
    value_fit_held_min: float | None = Field(default=None, ge=0, le=1)
    # An answer under the reader's floor is kept from `qa_reader_agreement_floor` where the
    # heads' clause reading states the same field in its line (ADR 0122): for the shipped
    # file, from its fitted floor; for a deployment's own file, only with a floor given
    # (`python -m factledger.bench.judgement.qa_reader.agreement_floor`). Off by default: it
    # found 0.02-0.03 more facts for 2.5x the extractor's CPU (ADR 0122, as merged).
    qa_reader_agreement: bool = False
    qa_reader_agreement_floor: float | None = Field(default=None, ge=-20, le=20)
    # A value the agent says back in the last sentence of its line ("So you're on Premium
    # now?") is proposed where the answer judge reads the subject's next line as opening with
    # a yes to it and no line of the subject's states the field (ADR 0138). Read only with
    # the QA reader. Off by default: on the four writers' held-out halves it found 7 more facts
    # of 2,084 and no update for about 1.35x the extractor's CPU a session, and on blind set
    # eight it changed nothing (ADR 0138, as merged).
    read_backs: bool = False
    # Who reads the reply to a read-back as a yes: `judge`, the answer judge as it reads a
    # confirmation of a pending change (both of its readers sure); `pair_reader`, its tuned
    # pair reader alone, at its own bar: a read-back is a pending proposal for a reviewer, not
    # a decision (ADR 0138).
    read_back_yes: Literal["judge", "pair_reader"] = "judge"
    # The QA reader's bar for the value of a read-back the subject confirmed; None: each
    # field's own floor (ADR 0138).
    read_back_floor: float | None = Field(default=None, ge=-20, le=20)
    # A subject's answer that is only a yes to a value the agent's question says back for its
    # field ("That's right." to "Your address is still 14 Orchard Lane?"): `kept` as the
    # field's value, or `dropped` (ADR 0221; the yes confirms the agent's words, which
    # `read_backs` proposes when on). Read only with the QA reader.
    bare_yeses: Literal["kept", "dropped"] = "kept"

    @field_validator("qa_reader_alone")
    @classmethod
    def _alone_for_the_qa_reader(cls, value: bool, info: ValidationInfo) -> bool:
        """The heads' reader reads no windows: reading them alone would silently do nothing."""
        if value and info.data.get("field_reader") != "qa_reader":
            raise ValueError("qa_reader_alone: set only with field_reader 'qa_reader'")
        return value

    @field_validator("bare_yeses")
    @classmethod
    def _bare_yeses_for_the_qa_reader(cls, value: str, info: ValidationInfo) -> str:
        """Only the QA reader reads the agent's questions: dropping would silently do nothing."""
        if value == "dropped" and info.data.get("field_reader") != "qa_reader":
            raise ValueError("bare_yeses: 'dropped' only with field_reader 'qa_reader'")
        return value

    # Checked field by field, so that a refusal names the field (a rule over the whole model
    # has no location of its own inside `extractor`).
    @field_validator(
        "qa_reader_path",
        "qa_reader_floor",
        "qa_reader_list_floor",
        "qa_reader_held_floor",
        "qa_reader_span_slack",
        "qa_reader_mention_floor",
        "qa_reader_agreement_floor",
        "read_back_floor",
    )
    @classmethod
    def _only_for_the_qa_reader(cls, value: object, info: ValidationInfo) -> object:
        """A QA reader's file or floor set for the heads' reader would silently do nothing;
        a deployment's file needs its own floor (the shipped file's would be another model's)."""
        if value is not None and info.data.get("field_reader") != "qa_reader":
            raise ValueError(f"{info.field_name}: set only with field_reader 'qa_reader'")
        if (
            info.field_name == "qa_reader_floor"
            and value is None
            and info.data.get("qa_reader_path")
        ):
            raise ValueError("qa_reader_floor: a deployment's QA reader file needs its floor")
        return value

    @field_validator(*_READ_ONLY_WHEN)
    @classmethod
    def _only_where_it_is_read(cls, value: object, info: ValidationInfo) -> object:
        """A file, floor or reader of a component the settings turn off would silently do
        nothing: one given other than its default is refused."""
        name = str(info.field_name)
        switch, turned_off, needed = _READ_ONLY_WHEN[name]
        given = value != cls.model_fields[name].default
        # A switch that failed its own check is absent here: its error is the one to show.
        if given and switch in info.data and info.data[switch] == turned_off:
            raise ValueError(f"{info.field_name}: set only with {needed}")
        return value

    @field_validator("field_floors_sha256")
    @classmethod
    def _a_floors_file_with_its_pin(cls, value: str | None, info: ValidationInfo) -> str | None:
        if (info.data.get("field_floors_path") is None) != (value is None):
            raise ValueError("field_floors_sha256: a deployment's field floors file needs its pin")
        return value

    @field_validator("answer_stance_sha256")
    @classmethod
    def _a_stance_file_with_its_pin(cls, value: str | None, info: ValidationInfo) -> str | None:
        if (info.data.get("answer_stance_path") is None) != (value is None):
            raise ValueError("answer_stance_sha256: a deployment's stance head file needs its pin")
        return value

    @field_validator("value_fit")
    @classmethod
    def _value_fit_for_the_qa_reader(cls, value: str, info: ValidationInfo) -> str:
        """The head reads the QA reader's answers and margins: with the heads' reader it
        would silently do nothing."""
        if value == "learned" and info.data.get("field_reader") != "qa_reader":
            raise ValueError("value_fit: set only with field_reader 'qa_reader'")
        return value

    @field_validator("value_fit_sha256")
    @classmethod
    def _a_value_fit_file_with_its_pin(cls, value: str | None, info: ValidationInfo) -> str | None:
        if (info.data.get("value_fit_path") is None) != (value is None):
            raise ValueError("value_fit_sha256: a deployment's value-fit file needs its pin")
        return value

    @field_validator("qa_reader_agreement")
    @classmethod
    def _agreement_without_a_value_fit(cls, value: bool, info: ValidationInfo) -> bool:
        """The two read under the reader's floor by different bars, never measured together:
        one would silently do nothing."""
        if value and info.data.get("value_fit") == "learned":
            raise ValueError("qa_reader_agreement: set only with value_fit 'none'")
        return value

    @field_validator("qa_reader_sha256")
    @classmethod
    def _a_file_with_its_pin(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("field_reader") != "qa_reader":
            raise ValueError("qa_reader_sha256: set only with field_reader 'qa_reader'")
        if (info.data.get("qa_reader_path") is None) != (value is None):
            raise ValueError("qa_reader_sha256: a deployment's QA reader file needs its pin")
        return value


ExtractorSettings = Annotated[
    RuleExtractorSettings | LearnedExtractorSettings | OpenAICompatibleExtractorSettings,
    Field(discriminator="kind"),
]

Slug = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,62}$")]


class GuidanceRouteSettings(NestedSettings):
    """One route of the guidance catalogue: sessions matching every part that is
    set are read with `guidance`, a packaged name (`default`, `sales_discovery`,
    `support_ticket`) or the path of a guidance file (`.yaml`/`.yml`)."""

    guidance: str = Field(min_length=1, max_length=500)
    tenant: str | None = Field(default=None, min_length=1, max_length=200)
    subject_kind: str | None = Field(default=None, min_length=1, max_length=100)
    channel: Channel | None = None
    conversation_type: Slug | None = None


class ExtractionSettings(NestedSettings):
    """Which guidance each session is read with, e.g. `FACTLEDGER_EXTRACTION__GUIDANCE='[
    {"conversation_type": "onboarding", "guidance": "/etc/factledger/onboarding.yaml"},
    {"tenant": "acme", "conversation_type": "support_ticket", "guidance": "acme.yaml"}]'`.

    The most specific matching route wins (the most parts set; ties: conversation type,
    subject kind, channel, tenant); no match: the default guidance (the extractor's
    `guidance_path`, else the packaged one). Each packaged conversation type is routed to its
    packaged guidance unless a route with the same parts replaces it."""

    guidance: list[GuidanceRouteSettings] = Field(default_factory=list)
    # Memories slotted by the profile field they state, so a later value supersedes the
    # earlier one (`application.memory.field_slots`): the shipped field heads, or a
    # deployment's own (`python -m factledger.bench.field_slots train`) pinned by SHA-256.
    field_slots: bool = True
    field_heads_path: Path | None = None
    field_heads_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    # What a recall query asks about and what an unslotted memory speaks of, read by the
    # asked-topic head (`application.memory.topics`, ADR 0098): the shipped head, or a
    # deployment's own (`python -m factledger.bench.field_slots train-topics`), pinned.
    asked_topics: bool = True
    topic_heads_path: Path | None = None
    topic_heads_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    # Which profile field a recall question asks about, read per subject kind by the question
    # heads, so the field's confirmed, then pending, value comes first (`recall.asked`): the
    # shipped heads, or a deployment's own (`... field_slots train-questions`), pinned.
    asked_fields: bool = True
    question_heads_path: Path | None = None
    question_heads_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    # The yes / no / neither judge of replies to a confirmation question: the shipped pair
    # head, or a deployment's own pinned: a pair head `.npz` (`python -m
    # factledger.bench.judgement answers`) or a cross-encoder `.onnx` (`... cross`).
    answer_head_path: Path | None = None
    answer_head_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
