"""The sentence judgement (`SentenceJudge`): the shipped heads, or a deployment's own.

One judge per heads file and process: the extractor of the proposer and that of a
self-hosted backend share it, so the embedder model behind it loads once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Literal

import structlog

from factledger.adapters.embedding.onnx.model_files import default_cache_dir
from factledger.adapters.embedding.recent_vectors import RecentVectors
from factledger.adapters.embedding.use_multilingual import (
    UseIntegrityError,
    UseMultilingualEmbedder,
)
from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.learned.sentences import (
    SentenceCandidates,
    SentencesBesideRules,
)
from factledger.adapters.judgement.answer_stance import LearnedAnswerStance
from factledger.adapters.judgement.cross_answers import (
    CrossAnswerJudge,
    CrossEncoderIntegrityError,
)
from factledger.adapters.judgement.dropped import (
    DroppedHeadIntegrityError,
    LearnedDroppedReader,
)
from factledger.adapters.judgement.forget_reader import (
    EitherReader,
    ForgetReader,
    ForgetReaderIntegrityError,
    RequestReader,
)
from factledger.adapters.judgement.heads import HeadsIntegrityError
from factledger.adapters.judgement.held_change import HeldChangeHead
from factledger.adapters.judgement.instructions import (
    PACKAGED_WEIGHING,
    BothEncodersInstructionDetector,
    LearnedInstructionDetector,
    MultilingualInstructionDetector,
)
from factledger.adapters.judgement.judge import (
    PACKAGED_HEADS,
    PACKAGED_HEADS_SHA256,
    AnswerReader,
    LearnedJudge,
)
from factledger.adapters.judgement.multilingual_closeness import MultilingualCloseness
from factledger.adapters.judgement.pair_answers import PairAnswerJudge
from factledger.adapters.judgement.qa_reader.agreement import PACKAGED_QA_READER_AGREEMENT_FLOOR
from factledger.adapters.judgement.qa_reader.field_floors import FieldFloors
from factledger.adapters.judgement.qa_reader.judge import QaReadingJudge
from factledger.adapters.judgement.qa_reader.mentions import PACKAGED_MENTION_FLOOR, QaFieldMentions
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER_SHA256,
    PACKAGED_QA_READER_SPAN_SLACK,
    QaFieldReader,
    QaReaderIntegrityError,
)
from factledger.adapters.judgement.secrets import LearnedSecretDetector
from factledger.adapters.judgement.tentative import LearnedTentativeReader
from factledger.adapters.judgement.tuned_answers_file import (
    TunedAnswersIntegrityError,
    holds_tuned_answers,
)
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.adapters.judgement.value_fit import ValueFitHead
from factledger.api.settings.extraction import (
    ExtractionSettings,
    ExtractorSettings,
    LearnedExtractorSettings,
)
from factledger.api.settings.proposals import ProposalSettings
from factledger.api.settings.safety import SafetySettings
from factledger.application.judgement.ports import ReplyReader, SentenceJudge
from factledger.application.judgement.stance import AnswerStanceReader
from factledger.application.memory.ports import Embedder, Extractor
from factledger.application.proposals.dropped import DroppedItemsReader
from factledger.application.sessions.instruction_screen import InstructionScreen
from factledger.application.sessions.ports import InstructionDetector, SafetyFilter
from factledger.application.sessions.secret_screen import SecretScreen
from factledger.domain.hedges import TentativeReader

log = structlog.get_logger(__name__)

# The tuned readers this process made: the warm-up unpacks their members (about a tenth of a
# second each) so that the first confirmation does not.
_TUNED: list[TunedUseAnswerJudge] = []


def _made(judge: TunedUseAnswerJudge) -> TunedUseAnswerJudge:
    _TUNED.append(judge)
    return judge


def unpack_answer_judges() -> None:
    """Unpacks the members of every tuned reader made so far, as their first reply would (a
    file that cannot be unpacked is left for that reply to refuse, as before)."""
    for judge in _TUNED:
        try:
            judge.unpack()
        except TunedAnswersIntegrityError as exc:
            log.error("answer_judge_unpack_failed", error_type=type(exc).__name__)


@cache
def pair_answers(path: Path | None = None, sha256: str | None = None) -> AnswerReader:
    """The judge of replies to a confirmation question: the shipped tuned multilingual encoder
    (ADR 0105), or a deployment's own pinned by SHA-256: a tuned encoder (`.npz`, `python -m
    factledger.bench.judgement tune-use`), a pair head over the multilingual encoder (`.npz`,
    `python -m factledger.bench.judgement answers`) or a cross-encoder (`.onnx`, `python -m
    factledger.bench.judgement cross`, ADR 0087). Each one's yes needs the reply-only
    head's too."""
    if path is None:
        return _made(TunedUseAnswerJudge.packaged())
    if path.suffix == ".onnx":
        return CrossAnswerJudge.load(path, sha256)
    if holds_tuned_answers(path, sha256):
        return _made(TunedUseAnswerJudge.load(path, sha256))
    return PairAnswerJudge.load_over_packaged_encoder(path, sha256)


# The reader of requests to forget a judge reads with: the shipped one, a deployment's file
# with its pin, or none (ADR 0165, 0166).
ForgetReaderChoice = Literal["packaged"] | tuple[Path, str | None] | None
DEFAULT_READER: Literal["default"] = "default"


def learned_judge(
    heads_path: Path | None = None,
    heads_sha256: str | None = None,
    answers_path: Path | None = None,
    answers_sha256: str | None = None,
    forget_reader: ForgetReaderChoice | Literal["default"] = DEFAULT_READER,
) -> SentenceJudge:
    """The judge of these files; by default the shipped readers of requests to forget with the
    shipped heads, none with a deployment's (its gate was fitted beside the shipped flag)."""
    if forget_reader == DEFAULT_READER:
        forget_reader = "packaged" if heads_path is None else None
    # One judge per set of files however it is asked for (the extractor asks with the heads
    # only, the answer path with the answer head too): the cache keys on arguments as given.
    return _learned_judge(heads_path, heads_sha256, answers_path, answers_sha256, forget_reader)


def forget_reader_of(settings: ExtractorSettings) -> ForgetReaderChoice | Literal["default"]:
    """The reader of requests to forget the settings choose (ADR 0165, 0166)."""
    if not isinstance(settings, LearnedExtractorSettings):
        return DEFAULT_READER
    if settings.forget_reader == "none":
        return None
    if settings.forget_reader_path is not None:
        return settings.forget_reader_path, settings.forget_reader_sha256
    return DEFAULT_READER


@cache
def _learned_judge(
    heads_path: Path | None,
    heads_sha256: str | None,
    answers_path: Path | None,
    answers_sha256: str | None,
    forget_reader: ForgetReaderChoice,
) -> SentenceJudge:
    # The embedder's graph from the user's graph cache, where the backend's embedder of the
    # same model keeps it too: compiling it again took about a third of a start's CPU.
    cache_dir = default_cache_dir()
    answers = pair_answers(answers_path, answers_sha256)
    path, sha256 = (
        (PACKAGED_HEADS, PACKAGED_HEADS_SHA256)
        if heads_path is None
        else (heads_path, heads_sha256)
    )
    if forget_reader == "packaged":
        reader: RequestReader | None = EitherReader.packaged()
    else:
        reader = None if forget_reader is None else ForgetReader.load(*forget_reader)
    return LearnedJudge.from_file(
        path, sha256, cache_dir=cache_dir, answers=answers, forget_reader=reader
    )


@cache
def qa_field_reader(
    path: Path | None = None,
    sha256: str | None = None,
    floor: float | None = None,
    list_floor: float | None = None,
    spread_lists: bool = False,
    held_floor: float | None = None,
    field_floors: tuple[Path, str | None] | None = None,
    alone: bool = False,
    cut_lists: bool = False,
    span_slack: float | None = None,
) -> QaFieldReader:
    """The one-pass QA reader of fields (ADR 0107): the shipped file, or a deployment's own
    pinned; one per file and process (the proposer's extractor and the backend's share it).
    With `spread_lists` a list field's spans are measured by all its items (ADR 0129); with
    `field_floors` (a floors file and its pin) each field that has a floor of its own reads
    from it (ADR 0152); with `alone` each window is read on its own, the shipped file at the
    floors chosen on reads made so, a deployment's file at its own (ADR 0156); with
    `cut_lists` a list field's span is cut where one item ends and the next begins (ADR
    0162); `span_slack` widens a single-valued field's answer (ADR 0227; None: the shipped
    file's own slack, none for a deployment's file)."""
    floors = None if field_floors is None else FieldFloors.load(*field_floors)
    if span_slack is None:
        span_slack = PACKAGED_QA_READER_SPAN_SLACK if path is None else 0.0
    if path is None:
        packaged = QaFieldReader.packaged(
            spread_lists=spread_lists, alone=alone, cut_lists=cut_lists, span_slack=span_slack
        )
        if floor is None and list_floor is None and held_floor is None and floors is None:
            return packaged
        if floors is not None and floors.reader_sha256 != PACKAGED_QA_READER_SHA256:
            raise QaReaderIntegrityError("field floors were fitted for another reader file")
        return QaFieldReader(
            packaged.model,
            packaged.floor if floor is None else floor,
            packaged.list_floor if list_floor is None else list_floor,
            packaged.held_floor if held_floor is None else held_floor,
            spread_lists=spread_lists,
            field_floors=floors,
            alone=alone,
            cut_lists=cut_lists,
            span_slack=span_slack,
        )
    if floor is None:
        raise ValueError("qa_reader_floor: a deployment's QA reader file needs its floor")
    return QaFieldReader.load(
        path,
        sha256,
        floor,
        list_floor,
        held_floor,
        spread_lists=spread_lists,
        field_floors=floors,
        alone=alone,
        cut_lists=cut_lists,
        span_slack=span_slack,
    )


def field_floors(settings: LearnedExtractorSettings) -> tuple[Path, str | None] | None:
    """A deployment's floors per field and their pin (ADR 0152); None: none given."""
    if settings.field_floors_path is None:
        return None
    return settings.field_floors_path, settings.field_floors_sha256


def reader_of(settings: LearnedExtractorSettings) -> QaFieldReader:
    """The settings' QA reader (the one instance per file and process)."""
    return qa_field_reader(
        settings.qa_reader_path,
        settings.qa_reader_sha256,
        settings.qa_reader_floor,
        settings.qa_reader_list_floor,
        spread_lists=settings.qa_reader_list_spread,
        held_floor=settings.qa_reader_held_floor,
        field_floors=field_floors(settings),
        alone=settings.qa_reader_alone,
        cut_lists=settings.qa_reader_list_cuts,
        span_slack=settings.qa_reader_span_slack,
    )


def placement_mentions(
    proposals: ProposalSettings, extractor: ExtractorSettings
) -> QaFieldMentions | None:
    """Whether a request placed by meaning speaks of its field (ADR 0218): the learned
    extractor's QA reader at its mention floor (the packaged file's own unless set); None
    when the proposals' setting is off, the extractor reads no QA reader, or a deployment's
    file has no mention floor."""
    if not proposals.forget_placement_mentions or not isinstance(
        extractor, LearnedExtractorSettings
    ):
        return None
    if extractor.field_reader != "qa_reader":
        return None
    floor = extractor.qa_reader_mention_floor
    if floor is None and extractor.qa_reader_path is None:
        floor = PACKAGED_MENTION_FLOOR
    return None if floor is None else QaFieldMentions(reader_of(extractor), floor)


def learned_extractor(settings: LearnedExtractorSettings, rules: Extractor) -> LearnedExtractor:
    """The learned extractor over `rules`: the heads judge, their field statements read by
    the QA reader when the settings choose it (then asked every field: ADR 0107); with
    `candidates: sentences`, the subject's sentences in place of the rules (ADR 0125); with
    `rules_and_sentences`, the sentences no rule fact stands on beside them (ADR 0157)."""
    judge = learned_judge(
        settings.heads_path, settings.heads_sha256, forget_reader=forget_reader_of(settings)
    )
    if settings.candidates == "sentences":
        rules = SentenceCandidates()
    elif settings.candidates == "rules_and_sentences":
        rules = SentencesBesideRules(rules)
    if settings.field_reader == "heads":
        return LearnedExtractor(rules, judge)
    reader = reader_of(settings)
    stance = answer_stance(settings, judge)
    fields_judge = QaReadingJudge(
        judge,
        reader,
        agreement_floor=agreement_floor(settings),
        held_change=held_change(settings, judge),
        value_fit=value_fit(settings, judge),
    )
    return LearnedExtractor(
        rules,
        fields_judge,
        asks_every_field=True,
        stance=stance,
        latest_of_held=settings.held_answer == "latest",
        read_backs=reader if settings.read_backs else None,
        said_back=reader if settings.bare_yeses == "dropped" else None,
        read_back_replies=read_back_replies(settings, judge),
        read_back_floor=settings.read_back_floor,
    )


def read_back_replies(
    settings: LearnedExtractorSettings, judge: SentenceJudge
) -> ReplyReader | None:
    """The reader of a read-back's reply (ADR 0138): None for the judge itself; its pair
    reader alone when the settings choose it and the judge has one."""
    if settings.read_back_yes == "judge" or not isinstance(judge, LearnedJudge):
        return None
    return judge.pair_answers


def held_change(settings: LearnedExtractorSettings, judge: SentenceJudge) -> HeldChangeHead | None:
    """The pair head on a held field's value (ADR 0137, 0145), over the judge's embedder (the
    model loads once); None when the settings leave it off (by default, with a deployment's
    own QA reader file and no head file of its own: the shipped head reads the packaged
    reader's margins); its threshold the settings' where they give one (ADR 0233)."""
    wanted = settings.qa_reader_held_change
    if wanted is None:
        wanted = settings.qa_reader_path is None or settings.held_change_path is not None
    if not wanted or not isinstance(judge, LearnedJudge):
        return None
    if settings.held_change_path is None:
        head = HeldChangeHead.packaged(judge.embedder)
    else:
        head = HeldChangeHead.load(
            settings.held_change_path, settings.held_change_sha256, judge.embedder
        )
    if settings.held_change_min is None:
        return head
    return replace(head, changed_min=settings.held_change_min)


def value_fit(settings: LearnedExtractorSettings, judge: SentenceJudge) -> ValueFitHead | None:
    """The value-fit head (ADR 0211) over the encoder its file names (ADR 0235: the judge's
    embedder or the multilingual encoder, each loaded once a process), its held fields' bar
    the settings' where they give one (ADR 0231); None when the settings
    leave it off (unset, ADR 0223: on with the packaged QA reader, or with a
    deployment's reader and a value-fit file of its own; off beside the heads' agreement or
    read-backs, neither ever measured with it)."""
    wanted = settings.value_fit
    if wanted is None:
        on = (
            settings.field_reader == "qa_reader"
            and not settings.qa_reader_agreement
            and not settings.read_backs
            and (settings.qa_reader_path is None or settings.value_fit_path is not None)
        )
        wanted = "learned" if on else "none"
    if wanted == "none" or not isinstance(judge, LearnedJudge):
        return None
    multilingual = value_fit_encoder()
    if settings.value_fit_path is None:
        head = ValueFitHead.packaged(judge.embedder, multilingual)
    else:
        head = ValueFitHead.load(
            settings.value_fit_path, settings.value_fit_sha256, judge.embedder, multilingual
        )
    if settings.value_fit_held_min is None:
        return head
    return replace(head, held_min=settings.value_fit_held_min)


def value_fit_encoder() -> UseMultilingualEmbedder:
    """The multilingual encoder a value-fit file fitted over it reads spans with (ADR 0235):
    the process's one encoder, loaded after ready; while it cannot load, a reading raises
    `ModelUnavailableError` and the sync holds the item and tries again."""
    return UseMultilingualEmbedder(load_in_background=True)


def answer_stance(
    settings: LearnedExtractorSettings, judge: SentenceJudge
) -> AnswerStanceReader | None:
    """The reader of whether a QA reader answer's sentence states its value (ADR 0121), over
    the judge's embedder (the model loads once); None when the settings choose none."""
    if settings.answer_stance == "none" or not isinstance(judge, LearnedJudge):
        return None
    if settings.answer_stance_path is None:
        # Small (two linear heads): each extractor loads its own; the embedder is the judge's.
        return LearnedAnswerStance.packaged(judge.embedder)
    return LearnedAnswerStance.load(
        settings.answer_stance_path, settings.answer_stance_sha256, judge.embedder
    )


def agreement_floor(settings: LearnedExtractorSettings) -> float | None:
    """Where answers under the QA reader's floor are kept on the heads' agreement (ADR
    0122): the setting's, else the shipped file's fitted floor; None: not at all."""
    if not settings.qa_reader_agreement:
        return None
    if settings.qa_reader_agreement_floor is not None:
        return settings.qa_reader_agreement_floor
    return PACKAGED_QA_READER_AGREEMENT_FLOOR if settings.qa_reader_path is None else None


def answer_judge(
    settings: ExtractorSettings, extraction: ExtractionSettings | None = None
) -> SentenceJudge | None:
    """The judge of the subject's answers (the learned extractor's heads when it is chosen,
    else the shipped ones; the pair answer head the extraction settings name, else the
    shipped one), or None when either cannot load: then no conversation confirms anything
    (a change stays pending until a reviewer decides)."""
    answers = (
        (extraction.answer_head_path, extraction.answer_head_sha256)
        if extraction is not None
        else (None, None)
    )
    try:
        reader = forget_reader_of(settings)
        if isinstance(settings, LearnedExtractorSettings) and settings.heads_path is not None:
            return learned_judge(settings.heads_path, settings.heads_sha256, *answers, reader)
        return learned_judge(None, None, *answers, reader)
    except (
        HeadsIntegrityError,
        ForgetReaderIntegrityError,
        UseIntegrityError,
        CrossEncoderIntegrityError,
        TunedAnswersIntegrityError,
        OSError,
        ValueError,
    ) as exc:
        log.error("sentence_judgement_unavailable", error_type=type(exc).__name__)
        return None


def tentative_reader(judge: SentenceJudge | None) -> TentativeReader | None:
    """The ledger's reader of tentative sentences over the judge's hedge head; None (the
    hedge rule unchecked, logged) when there is no packaged judge to read with."""
    if isinstance(judge, LearnedJudge):
        try:
            return LearnedTentativeReader(judge)
        except TypeError:
            pass
    log.error("hedge_check_unavailable")
    return None


@dataclass(frozen=True, slots=True)
class SafetyScreens:
    """What screens the fields a caller writes (summaries, proposals, reviewers' reasons) and
    what screens a session's messages: the same inner filter and instruction head, the messages
    also read by the secret head."""

    fields: SafetyFilter
    messages: SafetyFilter


def safety_screens(
    inner: SafetyFilter, judge: SentenceJudge | None, settings: SafetySettings | None = None
) -> SafetyScreens:
    """The fields: `inner`, then the shipped instruction heads (the English one over the
    judge's embedder when it is the packaged one, so the model loads once; beside it the
    multilingual one, unless `settings` read by the English head alone: ADR 0201). The
    messages: `inner`, then the secret head `settings` name (the shipped one by default, over
    the packaged multilingual encoder: ADR 0185), then the same instruction heads. The secret
    head reads messages only: it was fitted and measured on messages, and a field's bare value
    ("Quetzal Marmalade 7731") is not one. A shipped head that cannot load is logged and its
    check skipped (the detectors still withhold what they find, and what gets through is still
    fenced as the subject's words in every prompt); a deployment's own file that cannot load
    stops the start with its error. The multilingual heads share one encoder, which keeps the
    last sentences' vectors: the instruction head reads what the secret head encoded."""
    settings = settings or SafetySettings()
    encoder = screens_encoder() if _reads_multilingual(settings) else None
    detector = _instruction_detector(judge, settings, encoder)

    def instructions(screened: SafetyFilter) -> SafetyFilter:
        return screened if detector is None else InstructionScreen(screened, detector)

    secrets = _secrets_screened(inner, settings, encoder)
    return SafetyScreens(fields=instructions(inner), messages=instructions(secrets))


def screens_encoder() -> Embedder:
    """The multilingual encoder the screens' heads read, loaded after ready."""
    return RecentVectors(UseMultilingualEmbedder(load_in_background=True))


def _reads_multilingual(settings: SafetySettings) -> bool:
    return settings.secret_head or _instructions_read_multilingual(settings)


def _instructions_read_multilingual(settings: SafetySettings) -> bool:
    return settings.instruction_reading != "english"


def screened_safety(
    inner: SafetyFilter, judge: SentenceJudge | None, settings: SafetySettings | None = None
) -> SafetyFilter:
    """The fields' screen alone (`safety_screens`)."""
    settings = settings or SafetySettings()
    encoder = screens_encoder() if _instructions_read_multilingual(settings) else None
    detector = _instruction_detector(judge, settings, encoder)
    return inner if detector is None else InstructionScreen(inner, detector)


def screened_messages(
    inner: SafetyFilter, judge: SentenceJudge | None, settings: SafetySettings | None = None
) -> SafetyFilter:
    """The messages' screen alone (`safety_screens`)."""
    return safety_screens(inner, judge, settings).messages


def _secrets_screened(
    inner: SafetyFilter, settings: SafetySettings, encoder: Embedder | None
) -> SafetyFilter:
    if not settings.secret_head:
        return inner
    if settings.secret_head_path is not None:
        path, sha256 = settings.secret_head_path, settings.secret_head_sha256
        return SecretScreen(inner, LearnedSecretDetector.shipped(path, sha256, encoder))
    try:
        detector = LearnedSecretDetector.packaged(encoder)
    except (HeadsIntegrityError, OSError, ValueError) as exc:
        log.error("secret_check_unavailable", error_type=type(exc).__name__)
        return inner
    return SecretScreen(inner, detector)


def _instruction_detector(
    judge: SentenceJudge | None, settings: SafetySettings, encoder: Embedder | None
) -> InstructionDetector | None:
    """The English head, and beside it the multilingual one over `encoder` unless `settings`
    say otherwise (ADR 0201), their readings weighed (ADR 0204) or averaged; a multilingual
    head that cannot load is logged and the English head reads alone, as it did before ADR
    0201."""
    embedder = judge.embedder if isinstance(judge, LearnedJudge) else None
    try:
        try:
            english = LearnedInstructionDetector.packaged(embedder)
        except ValueError:  # the judge's embedder is another model: the head's own
            english = LearnedInstructionDetector.packaged()
    except (HeadsIntegrityError, OSError, ValueError) as exc:
        log.error("instruction_check_unavailable", error_type=type(exc).__name__)
        return None
    if settings.instruction_reading == "english":
        return english
    try:
        multilingual = MultilingualInstructionDetector.packaged(encoder)
    except (HeadsIntegrityError, OSError, ValueError) as exc:
        log.error("multilingual_instruction_head_unavailable", error_type=type(exc).__name__)
        return english
    weighing = None if settings.instruction_reading == "mean" else PACKAGED_WEIGHING
    return BothEncodersInstructionDetector(english, multilingual, weighing)


def dropped_items_reader(settings: ProposalSettings) -> DroppedItemsReader | None:
    """The reader of list items a sentence drops (ADR 0159): the deployment's own model when
    the settings turn removals on; None when they do not, or when its file cannot be used
    (logged): then the model only extends lists."""
    if not settings.dropped_items or settings.dropped_items_model_path is None:
        return None
    try:
        return LearnedDroppedReader.load(
            settings.dropped_items_model_path, settings.dropped_items_model_sha256
        )
    except DroppedHeadIntegrityError as exc:
        log.error("dropped_items_unavailable", error_type=type(exc).__name__)
        return None


def placement_reading(settings: ProposalSettings) -> MultilingualCloseness | None:
    """The second reading a request to forget is placed by (ADR 0200): the packaged
    multilingual encoder's, unless the settings place by the heads' encoder alone."""
    return MultilingualCloseness.packaged() if settings.forget_placement == "both" else None
