"""The value-fit head (ADR 0211): its file is read only against its pin and its embedder; an
answer over its bar is kept unless the head doubts it is the kind of words its field holds,
one under its bar only where the head is sure and never further under than the file's reach;
a field the bank does not know is read by its bar alone; a held field's answers are read at
the head's held bar, or pass as read where it has none; a later session's unheld answers are
read by the file's later reading where it has one: bars of its own (ADR 0242) and a
five-number regression of its own, which reads no verifier (ADR 0243). The values below were
written for this test."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from factledger.adapters import deferred_load
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.forget_reader import (
    PACKAGED_FORGET_READER,
    PACKAGED_FORGET_READER_SHA256,
)
from factledger.adapters.judgement.qa_reader.reader import LineRead, QaFieldReader
from factledger.adapters.judgement.qa_reader.value_fits import fitted, reaching
from factledger.adapters.judgement.span_verifier import PinnedVerifier, log_odds
from factledger.adapters.judgement.value_fit import (
    FEATURES,
    PACKAGED_VALUE_FIT,
    PACKAGED_VALUE_FIT_SHA256,
    VERIFIED_FEATURES,
    Bank,
    LaterReading,
    ValueAnswer,
    ValueFitHead,
    ValueFitIntegrityError,
    Verifier,
    logistic,
)
from factledger.application.errors import ModelUnavailableError
from factledger.application.judgement.types import FieldStatement
from factledger.domain.transcript import Message, Role

# Three directions, so that closeness is exact: payment methods, allergies, anything else.
AXES = {"pay": 0, "allergy": 1, "other": 2}
WORDS = {
    "Amex": "pay",
    "direct debit": "pay",
    "by card": "pay",
    "latex": "allergy",
    "penicillin": "allergy",
    "raise the deductible next month": "other",
    "my father smoked": "other",
}


@dataclass
class AxisEmbedder:
    """A fake embedder: each known text a unit vector on its kind's axis."""

    model_id: str = "axes-3"
    dimension: int = 3
    asked: list[str] = field(default_factory=list)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.asked += texts
        return [np.eye(3)[AXES[WORDS[t]]].tolist() for t in texts]


def _bank(embedder: AxisEmbedder) -> Bank:
    pay = np.array([np.eye(3)[0]] * 3, dtype=np.float32)
    allergy = np.array([np.eye(3)[1]] * 3, dtype=np.float32)
    return Bank.of({"payment_method": pay, "allergies": allergy})


def _head(embedder: AxisEmbedder, held_min: float | None = None) -> ValueFitHead:
    # Reads only how much closer the span is to its field than to the other fields asked.
    weights = np.zeros(len(FEATURES), dtype=np.float32)
    weights[FEATURES.index("own_less_other")] = 4.0
    return ValueFitHead(embedder, _bank(embedder), weights, -2.0, 0.5, 0.8, 3.0, held_min)


def _answer(
    name: str, span: str, over: float, *, held: bool = False, line: str = "", later: bool = False
) -> ValueAnswer:
    fields = ("payment_method", "allergies", "diet")
    return ValueAnswer(name, span, over, False, fields, held, line=line, later=later)


def test_a_fields_closeness_is_its_nearest_values_and_none_for_a_field_it_never_saw() -> None:
    bank = _bank(AxisEmbedder())
    unit = np.eye(3, dtype=np.float32)[0]

    assert bank.closeness("payment_method", unit) == pytest.approx(1.0, abs=0.01)
    assert bank.closeness("allergies", unit) == pytest.approx(0.0, abs=0.01)
    assert bank.closeness("diet", unit) is None


async def test_an_answer_is_kept_by_the_kind_of_its_words_and_how_far_under_its_bar() -> None:
    head = _head(AxisEmbedder())
    answers = [
        _answer("payment_method", "Amex", 2.0),  # over the bar, a payment method: kept
        _answer("payment_method", "raise the deductible next month", 4.0),  # over, doubted
        _answer("allergies", "latex", -2.0),  # under the bar, sure: kept
        _answer("allergies", "penicillin", -3.5),  # sure, but further under than the reach
        _answer("payment_method", "latex", -1.0),  # under the bar, another field's kind
        _answer("diet", "my father smoked", -0.5),  # a field it never saw: its bar alone
        _answer("diet", "by card", 0.5),
    ]

    assert await head.kept(answers) == [True, False, True, False, False, False, True]


async def test_a_held_fields_answer_is_read_at_the_held_bar_or_passes_without_one() -> None:
    answers = [
        _answer("payment_method", "raise the deductible next month", 4.0, held=True),  # doubted
        _answer("payment_method", "Amex", 0.5, held=True),  # a payment method: kept
        _answer("allergies", "latex", -1.0, held=True),  # admitted under the held floor: sure
        _answer("diet", "my father smoked", -2.0, held=True),  # a field it never saw: as read
    ]

    assert await _head(AxisEmbedder(), held_min=0.3).kept(answers) == [False, True, True, True]
    assert await _head(AxisEmbedder()).kept(answers) == [True, True, True, True]


async def test_a_later_sessions_unheld_answer_is_read_by_the_later_bars_where_there_are() -> None:
    head = _head(AxisEmbedder())  # "Amex" as a payment method reads 0.88, "latex" 0.0025
    strict = replace(head, later_reading=LaterReading(0.95, 0.95))
    loose = replace(head, later_reading=LaterReading(0.0, 0.0))
    answers = [
        _answer("payment_method", "Amex", 2.0, later=True),
        _answer("payment_method", "latex", -1.0, later=True),
        _answer("payment_method", "latex", -3.5, later=True),  # further under than the reach
        _answer("payment_method", "raise the deductible next month", 1.0, held=True, later=True),
        _answer("diet", "my father smoked", 0.5, later=True),  # a field it never saw
    ]
    first = [replace(a, later=False) for a in answers]

    assert await head.kept(answers) == await head.kept(first) == [True, False, False, True, True]
    assert await strict.kept(answers) == [False, False, False, True, True]
    assert await loose.kept(answers) == [True, True, False, True, True]
    assert await strict.kept(first) == await loose.kept(first) == await head.kept(first)


async def test_where_the_subject_holds_any_field_the_session_is_a_later_one() -> None:
    head = replace(_head(AxisEmbedder()), later_reading=LaterReading(0.95, 0.95))
    amex = FieldStatement(7, "Amex", "payment_method", 6.0)
    fields = ["payment_method", "allergies", "diet"]

    assert await fitted(READER, head, [], [amex], fields, (), {}) == [amex]
    assert await fitted(READER, head, [], [amex], fields, (), {"diet": "vegan"}) == []


async def test_a_head_reads_back_from_its_file_and_only_against_its_pin(tmp_path: Path) -> None:
    embedder = AxisEmbedder()
    path = tmp_path / "value-fit.npz"
    sha256 = _head(embedder).save(path)

    loaded = ValueFitHead.load(path, sha256, embedder)

    assert (loaded.keep_min, loaded.admit_min, loaded.reach) == (0.5, 0.8, 3.0)
    assert loaded.held_min is None  # a setting's, never the file's
    assert sorted(loaded.bank.rows) == ["allergies", "payment_method"]
    assert await loaded.kept([_answer("allergies", "latex", -2.0)]) == [True]
    with pytest.raises(ValueFitIntegrityError, match="sha256 differs"):
        ValueFitHead.load(path, "0" * 64, embedder)
    with pytest.raises(ValueFitIntegrityError, match="embedder"):
        ValueFitHead.load(path, sha256, AxisEmbedder(model_id="another"))


async def test_a_file_is_read_over_the_encoder_it_names_of_those_given(tmp_path: Path) -> None:
    fitted_over = AxisEmbedder(model_id="multilingual")
    path = tmp_path / "value-fit.npz"
    sha256 = _head(fitted_over).save(path)
    english = AxisEmbedder(model_id="english")

    loaded = ValueFitHead.load(path, sha256, english, fitted_over)

    assert loaded.embedder is fitted_over
    assert await loaded.kept([_answer("allergies", "latex", -2.0)]) == [True]
    assert fitted_over.asked == ["latex"]
    assert english.asked == []
    with pytest.raises(ValueFitIntegrityError, match="needs the embedder multilingual"):
        ValueFitHead.load(path, sha256, english, AxisEmbedder(model_id="another"))


def test_the_packaged_file_reads_against_its_pin_over_the_multilingual_encoder() -> None:
    english = AxisEmbedder(model_id=_packaged_model())
    multilingual = AxisEmbedder(model_id=UseMultilingualEmbedder.model_id)

    head = ValueFitHead.load(PACKAGED_VALUE_FIT, PACKAGED_VALUE_FIT_SHA256, english, multilingual)

    assert head.embedder is multilingual  # ADR 0235
    with pytest.raises(ValueFitIntegrityError, match="needs the embedder"):
        ValueFitHead.load(PACKAGED_VALUE_FIT, PACKAGED_VALUE_FIT_SHA256, english)

    assert 0 < head.keep_min <= head.admit_min < 1
    assert head.reach == 3.0
    assert head.held_min is None  # ADR 0231, rejected: held answers pass as read
    assert {"payment_method", "allergies", "skills", "budget"} <= set(head.bank.rows)


def _packaged_model() -> str:
    return OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET), load_in_background=True).model_id


READER = QaFieldReader(b"", floor=5.5, list_floor=6.0, held_floor=4.5)


def test_a_file_keeps_its_later_reading_and_refuses_a_malformed_one(tmp_path: Path) -> None:
    embedder = AxisEmbedder()
    path = tmp_path / "value-fit.npz"
    five = np.arange(len(FEATURES), dtype=np.float32)
    sha256 = replace(_head(embedder), later_reading=LaterReading(0.45, 0.55, five, -1.5)).save(path)
    bars = tmp_path / "bars.npz"
    bars_sha256 = replace(_head(embedder), later_reading=LaterReading(0.45, 0.55)).save(bars)

    loaded = ValueFitHead.load(path, sha256, embedder).later_reading
    assert loaded is not None
    assert loaded.weights is not None
    assert (loaded.keep_min, loaded.admit_min, loaded.bias) == (0.45, 0.55, -1.5)
    assert loaded.weights.tolist() == five.tolist()
    assert ValueFitHead.load(bars, bars_sha256, embedder).later_reading == LaterReading(0.45, 0.55)
    without = tmp_path / "without.npz"
    assert ValueFitHead.load(without, _head(embedder).save(without), embedder).later_reading is None
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    three = tmp_path / "three.npz"
    np.savez_compressed(three, **(arrays | {"later_bars": np.array([0.4, 0.5, 0.6])}))
    with pytest.raises(ValueFitIntegrityError, match="later bars are not a pair"):
        ValueFitHead.load(three, None, embedder)
    six = tmp_path / "six.npz"
    np.savez_compressed(six, **(arrays | {"later_w": np.zeros(6, dtype=np.float32)}))
    with pytest.raises(ValueFitIntegrityError, match="later regression is not five numbers"):
        ValueFitHead.load(six, None, embedder)
    unbiased = tmp_path / "unbiased.npz"
    np.savez_compressed(unbiased, **{k: v for k, v in arrays.items() if k != "later_b"})
    with pytest.raises(ValueFitIntegrityError, match="later regression is not five numbers"):
        ValueFitHead.load(unbiased, None, embedder)


async def test_the_unheld_fields_answers_are_judged_a_held_fields_pass_as_read() -> None:
    embedder = AxisEmbedder()
    doubted = FieldStatement(1, "raise the deductible next month", "payment_method", 8.0)
    sure_under = FieldStatement(3, "latex", "allergies", 3.5)  # 2.0 under the floor
    held = FieldStatement(5, "my father smoked", "diet", 4.6)  # held: over the held floor
    kept = FieldStatement(7, "Amex", "payment_method", 6.0)
    fields = ["payment_method", "allergies", "diet"]

    found = await fitted(
        READER,
        _head(embedder),
        [],
        [doubted, sure_under, held, kept],
        fields,
        (),
        {"diet": "vegan"},
    )

    assert found == [sure_under, held, kept]
    assert "my father smoked" not in embedder.asked  # a held field's answer is never read
    assert reaching(fields, {"diet": "vegan"}) == ["payment_method", "allergies"]


async def test_with_a_held_bar_a_held_fields_answer_is_judged_too() -> None:
    embedder = AxisEmbedder()
    doubted_held = FieldStatement(1, "raise the deductible next month", "payment_method", 5.0)
    sure_held = FieldStatement(3, "latex", "allergies", 4.6)
    fields = ["payment_method", "allergies", "diet"]
    held = {"payment_method": "by card", "allergies": "penicillin"}

    found = await fitted(
        READER, _head(embedder, held_min=0.3), [], [doubted_held, sure_held], fields, (), held
    )

    assert found == [sure_held]
    assert sorted(embedder.asked) == ["latex", "raise the deductible next month"]


async def test_nothing_but_held_answers_reads_nothing() -> None:
    embedder = AxisEmbedder()
    held = FieldStatement(5, "my father smoked", "diet", 4.6)

    found = await fitted(READER, _head(embedder), [], [held], ["diet"], (), {"diet"})

    assert found == [held]
    assert embedder.asked == []


def test_a_reader_reaching_under_its_bar_gives_what_it_gave_and_more() -> None:
    reader = QaFieldReader.packaged()
    lines = [
        LineRead(1, "I'm allergic to latex, and I pay with my Amex usually.", "Any allergies?")
    ]
    fields = ["allergies", "payment_method", "diet"]

    at_bar = reader.answers_sync(lines, fields)
    reaching_under = reader.answers_sync(lines, fields, reach=4.0, reaching={"allergies"})
    every_floor = reader.answers_sync(lines, fields, floor=5.5 - 4.0)

    assert set(at_bar) <= set(reaching_under)
    extra = set(reaching_under) - set(at_bar)
    assert extra  # the allergy is read 2 over "no value": under the bar, within the reach
    assert all(a.field == "allergies" and a.margin >= 5.5 - 4.0 for a in extra)
    assert extra == {a for a in every_floor if a.field == "allergies"} - set(at_bar)


@dataclass
class ReadingVerifier:
    """A verifier whose reading the test sets: a line about someone's brother is a wrong
    answer, every other a right one; it keeps what it read."""

    path: Path = Path("reading.onnx")
    sha256: str = "0" * 64
    read: list[tuple[str, str]] = field(default_factory=list)

    def log_odds_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        self.read += pairs
        return log_odds(np.array([0.001 if "brother" in line else 0.999 for _, line in pairs]))


def _verified_head(embedder: AxisEmbedder, verifier: Verifier) -> ValueFitHead:
    weights = np.zeros(len(VERIFIED_FEATURES), dtype=np.float32)
    weights[VERIFIED_FEATURES.index("own_less_other")] = 4.0
    weights[VERIFIED_FEATURES.index("verifier")] = 1.0
    head = _head(embedder)
    return ValueFitHead(embedder, head.bank, weights, -2.0, 0.5, 0.8, 3.0, verifier=verifier)


async def test_a_verifier_reads_each_answer_in_its_line_as_a_sixth_number() -> None:
    verifier = ReadingVerifier()
    transcript = [
        Message(Role.AGENT, "And how do you usually pay?"),
        Message(Role.SUBJECT, "I pay with Amex."),
        Message(Role.SUBJECT, "My brother pays with his Amex."),
    ]
    mine = FieldStatement(1, "Amex", "payment_method", 6.0)
    his = FieldStatement(2, "Amex", "payment_method", 6.0)

    head = _verified_head(AxisEmbedder(), verifier)
    found = await fitted(READER, head, transcript, [mine, his], ["payment_method"], (), ())

    assert found == [mine]  # the same words; the verifier reads whose they are
    assert verifier.read == [
        ("payment method | And how do you usually pay?", "I pay with [Amex]."),
        ("payment method", "My brother pays with his [Amex]."),
    ]
    rows = await head.features([_answer("payment_method", "Amex", 1.0, line="I pay with Amex.")])
    assert rows[0] is not None
    assert rows[0][-1] == pytest.approx(np.log(999.0))
    assert await _head(AxisEmbedder()).kept([_answer("payment_method", "Amex", 1.0)]) == [True]


async def test_a_later_reading_of_five_numbers_reads_a_later_answer_without_the_verifier() -> None:
    verifier = ReadingVerifier()
    # The later regression reads only closeness to the field's own values (0.0025 for "latex"
    # as a payment method, 0.98 for "Amex"), whatever the line says.
    five = np.zeros(len(FEATURES), dtype=np.float32)
    five[FEATURES.index("own")] = 8.0
    later = LaterReading(0.5, 0.5, five, -4.0)
    head = replace(_verified_head(AxisEmbedder(), verifier), later_reading=later)
    brother = "My brother pays with his Amex."
    answers = [
        _answer("payment_method", "Amex", 1.0, line=brother, later=True),  # read by the five
        _answer("payment_method", "Amex", 1.0, line=brother),  # a first session: the verifier
        _answer("allergies", "latex", 1.0, line="I'm allergic to latex.", later=True, held=True),
    ]

    assert await head.kept(answers) == [True, False, True]
    # The held answer passes as read: keeping it asks the verifier nothing (its features do).
    assert verifier.read == [("payment method", "My brother pays with his [Amex].")]
    rows = await head.features(answers)
    assert [len(r) for r in rows if r is not None] == [5, 6, 6]


@dataclass
class ChanceVerifier:
    """A verifier whose log-odds of each pair are drawn from its line, anywhere within the
    clip; it counts the pairs it read."""

    path: Path = Path("chance.onnx")
    sha256: str = "0" * 64
    read: int = 0

    def log_odds_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        self.read += len(pairs)
        drawn = [np.random.default_rng(zlib.crc32(line.encode())).random() for _, line in pairs]
        return log_odds(np.array(drawn) ** 3)  # sure readings either way among them


def _as_ruled(head: ValueFitHead, a: ValueAnswer, row: Sequence[float] | None) -> bool:
    """The keeping rule of `ValueFitHead.kept`, read off an answer's every number."""
    if row is None:
        return a.held or a.over_bar >= 0
    if a.held:
        return head.held_min is None or logistic(row, head.weights, head.bias) >= head.held_min
    weights, bias, keep, admit = head.reading_of(a)
    p = logistic(row, weights, bias)
    return p >= keep if a.over_bar >= 0 else a.over_bar >= -head.reach and p >= admit


async def test_the_verifier_reads_only_answers_whose_keeping_its_number_could_change() -> None:
    rng = np.random.default_rng(245)
    spans = sorted(WORDS)
    asked = read = 0
    for trial in range(40):
        verifier = ChanceVerifier()
        weights = rng.normal(0.0, 2.0, len(VERIFIED_FEATURES)).astype(np.float32)
        weights[-1] = rng.uniform(0.05, 1.2) * rng.choice([-1.0, 1.0])
        keep, admit = rng.uniform(0.2, 0.9, 2)
        later = (
            None,
            LaterReading(*rng.uniform(0.2, 0.9, 2)),
            LaterReading(0.6, 0.6, rng.normal(0.0, 2.0, len(FEATURES)).astype(np.float32), 0.1),
        )[trial % 3]
        head = ValueFitHead(
            AxisEmbedder(),
            _bank(AxisEmbedder()),
            weights,
            float(rng.normal()),
            float(keep),
            float(admit),
            3.0,
            held_min=None if trial % 2 else 0.5,
            verifier=verifier,
            later_reading=later,
        )
        answers = [
            _answer(
                str(rng.choice(["payment_method", "allergies", "diet"])),
                str(rng.choice(spans)),
                float(rng.uniform(-5.0, 5.0)),
                held=bool(rng.random() < 0.3),
                line=f"line {trial}-{n}",
                later=bool(rng.random() < 0.5),
            )
            for n in range(60)
        ]

        kept = await head.kept(answers)
        read += verifier.read
        rows = await head.features(answers)

        assert kept == [_as_ruled(head, a, row) for a, row in zip(answers, rows, strict=True)]
        asked += sum(head.reads_verifier(a) for a in answers)
    assert 0 < read < asked / 2  # most are settled without it; some are not


async def test_a_field_the_bank_never_saw_is_not_read_by_the_verifier() -> None:
    verifier = ReadingVerifier()

    kept = await _verified_head(AxisEmbedder(), verifier).kept([_answer("diet", "by card", 0.5)])

    assert kept == [True]
    assert verifier.read == []


def test_a_file_names_its_verifiers_graph_beside_it_and_pins_it(tmp_path: Path) -> None:
    embedder = AxisEmbedder()
    elsewhere = tmp_path / "lab"
    elsewhere.mkdir()
    graph = elsewhere / "verifier.onnx"
    graph.write_bytes(PACKAGED_FORGET_READER.read_bytes())
    pinned = PinnedVerifier(graph, PACKAGED_FORGET_READER_SHA256)
    path = tmp_path / "value-fit.npz"

    sha256 = _verified_head(embedder, pinned).save(path)
    loaded = ValueFitHead.load(path, sha256, embedder)

    assert isinstance(loaded.verifier, PinnedVerifier)
    assert loaded.verifier.path == tmp_path / "verifier.onnx"  # copied beside the file
    assert loaded.verifier.sha256 == PACKAGED_FORGET_READER_SHA256
    assert loaded.weights.shape == (len(VERIFIED_FEATURES),)
    pair = [("allergies | Any allergies?", "Only [latex].")]
    assert loaded.verifier.log_odds_sync(pair).tolist() == pinned.log_odds_sync(pair).tolist()


def test_a_file_whose_verifier_is_unnamed_elsewhere_or_missing_is_refused(tmp_path: Path) -> None:
    embedder = AxisEmbedder()
    graph = tmp_path / "verifier.onnx"
    graph.write_bytes(PACKAGED_FORGET_READER.read_bytes())
    path = tmp_path / "value-fit.npz"
    _verified_head(embedder, PinnedVerifier(graph, PACKAGED_FORGET_READER_SHA256)).save(path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    unnamed = tmp_path / "unnamed.npz"
    np.savez_compressed(unnamed, **{k: v for k, v in arrays.items() if k != "verifier_file"})

    with pytest.raises(ValueFitIntegrityError, match="does not name its verifier"):
        ValueFitHead.load(unnamed, None, embedder)
    elsewhere = tmp_path / "elsewhere.npz"
    np.savez_compressed(elsewhere, **(arrays | {"verifier_file": np.array("../verifier.onnx")}))
    with pytest.raises(ValueFitIntegrityError, match="not a file beside it"):
        ValueFitHead.load(elsewhere, None, embedder)
    five_weights = tmp_path / "five-weights.npz"
    np.savez_compressed(five_weights, **(arrays | {"w": arrays["w"][:5]}))
    with pytest.raises(ValueFitIntegrityError, match="reads other features"):
        ValueFitHead.load(five_weights, None, embedder)
    graph.unlink()
    with pytest.raises(ValueFitIntegrityError, match=r"verifier\.onnx is missing"):
        ValueFitHead.load(path, None, embedder)


async def test_a_damaged_verifier_graph_costs_an_unavailable_model_until_it_is_mended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph is read after ready: a file damaged since the start is no 500 and no answer
    read by five numbers in place of six, but `ModelUnavailableError` (the sync holds the
    session and tries again), until the file is whole again."""
    monkeypatch.setattr(deferred_load, "RETRY_AFTER_S", 0.0)  # the next reading loads again
    embedder = AxisEmbedder()
    graph = tmp_path / "verifier.onnx"
    graph.write_bytes(PACKAGED_FORGET_READER.read_bytes())
    path = tmp_path / "value-fit.npz"
    pinned = PinnedVerifier(graph, PACKAGED_FORGET_READER_SHA256)
    sha256 = _verified_head(embedder, pinned).save(path)
    head = ValueFitHead.load(path, sha256, embedder)
    graph.write_bytes(b"\x00" * 64)  # damaged after the start
    answer = _answer("allergies", "latex", 1.0, line="Only latex.")

    with pytest.raises(ModelUnavailableError):
        await head.kept([answer])
    graph.write_bytes(PACKAGED_FORGET_READER.read_bytes())
    assert len(await head.kept([answer])) == 1
