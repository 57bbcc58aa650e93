"""The QA reader trains and reads (lab only: skipped where torch is not installed)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from factledger.adapters.embedding.onnx.model_files import TOKENIZER  # noqa: E402
from factledger.bench.judgement.bert import read_safetensors  # noqa: E402
from factledger.bench.judgement.qa_reader.batches import Example  # noqa: E402
from factledger.bench.judgement.qa_reader.evaluate import (  # noqa: E402
    Session,
    load_reader,
    read_all,
)
from factledger.bench.judgement.qa_reader.fields_pass import FieldAsked, FieldsTokens  # noqa: E402
from factledger.bench.judgement.qa_reader.fields_train import (  # noqa: E402
    field_weights,
    item_loss,
    line_inputs,
    line_length,
    line_loss,
    read_lines,
)
from factledger.bench.judgement.qa_reader.model import FieldsReader, QaReader  # noqa: E402
from factledger.bench.judgement.qa_reader.pairs import LineAsked  # noqa: E402
from factledger.bench.judgement.qa_reader.tokens import PairTokens, load_tokenizer  # noqa: E402
from factledger.bench.judgement.qa_reader.train import (  # noqa: E402
    Budget,
    fit,
    pair_length,
    pair_loss,
)

LINE = "hi, Ada Quill here, I run ops at Fernbrook Dairy"


def _tiny() -> QaReader:
    torch.manual_seed(0)
    return QaReader(layers=1, width=32, heads=2)


def _examples(tokens: PairTokens) -> list[Example]:
    name = LINE.index("Ada Quill")
    employer = LINE.index("Fernbrook")
    asked = [
        ("what is the person's name?", ((name, name + 9),)),
        ("what is the person's employer?", ((employer, len(LINE)),)),
        ("what is the person's budget?", ()),
    ]
    return [
        Example(window, (False,) * 4, bool(spans))
        for question, spans in asked
        for window in tokens.encode(question, LINE, "Who is this?", spans)
    ]


def test_a_pass_per_field_fits_the_answers_and_saves_the_weights(tmp_path: Path) -> None:
    tokens = PairTokens(load_tokenizer(TOKENIZER))
    reader = _tiny()

    done = fit(
        reader,
        _examples(tokens) * 8,
        Budget(seconds=120, epochs=60, batch=8, learning_rate=2e-3),
        tmp_path,
        pair_loss,
        pair_length,
    )

    assert (tmp_path / "reader.pt").exists()
    assert done["final_loss"] < 1.0
    session = Session("c", 0, (("agent", "Who is this?"), ("subject", LINE)),
                      ("name", "employer"), {"name": False, "employer": False})  # fmt: skip
    best = {r.field: r for r in sorted(read_all(reader, tokens, [session]), key=lambda r: r.margin)}
    assert best["name"].value == "Ada Quill"
    assert "Fernbrook" in best["employer"].value


def test_base_weights_are_read_from_a_safetensors_file(tmp_path: Path) -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    header = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + array.tobytes())

    read = read_safetensors(path)

    assert read["w"].tolist() == array.tolist()


def test_one_pass_per_line_learns_which_field_each_value_belongs_to(tmp_path: Path) -> None:
    tokens = FieldsTokens(load_tokenizer(TOKENIZER))
    name, employer = LINE.index("Ada Quill"), LINE.index("Fernbrook")
    fields = [
        FieldAsked("name", False, ((name, name + 9),), (False,) * 4),
        FieldAsked("employer", False, ((employer, len(LINE)),), (False,) * 4),
        FieldAsked("budget", False, (), (False,) * 4),
    ]
    # Fields in one order: a model this small tells them apart by place, which is enough to
    # check that each field's gold and answers stay its own.
    examples = [w for _ in range(16) for w in tokens.encode(fields, LINE, "Who is this?", None)]
    torch.manual_seed(0)
    reader = FieldsReader(layers=1, width=32, heads=2)

    budget = Budget(seconds=120, epochs=40, batch=4, learning_rate=2e-3)
    fit(reader, examples, budget, tmp_path, line_loss, line_length)

    asked = LineAsked("c", 0, 1, LINE, "Who is this?")
    reads = read_lines(reader, tokens, [(asked, fields)], floor=0.0)
    best = {r.field: r for r in sorted(reads, key=lambda r: r.margin)}
    assert best["name"].value == "Ada Quill"
    assert "Fernbrook" in best["employer"].value
    assert "budget" not in best


def test_an_unstated_field_weighs_the_no_answer_weight_and_an_unasked_one_nothing() -> None:
    stated = torch.tensor([[True, False, False]])
    asked = torch.tensor([[True, True, False]])

    weights = field_weights(stated, asked, 0.2)

    assert weights[0].tolist() == pytest.approx([1.0, 0.2, 0.0])


def test_a_line_stating_nothing_teaches_nothing_when_no_value_weighs_nothing() -> None:
    tokens = FieldsTokens(load_tokenizer(TOKENIZER))
    fields = [FieldAsked("budget", False, (), (False,) * 4)]
    batch = tokens.encode(fields, LINE, "Who is this?", None)
    torch.manual_seed(0)
    reader = FieldsReader(layers=1, width=32, heads=2)

    assert float(line_loss(reader, batch, no_answer=0.0).detach()) == 0.0
    assert float(line_loss(reader, batch, no_answer=1.0).detach()) > 0.0


def _shared_softmax_loss(scores: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    log_p = torch.log_softmax(scores, dim=-1)
    return -torch.logsumexp(log_p.masked_fill(~gold, -1e4), dim=-1)


def test_a_list_items_loss_is_each_items_own_and_not_a_share_of_the_lines() -> None:
    # [CLS] then five tokens; the field states three items, each as likely as "no value".
    scores = torch.tensor([[[2.0, 0.0, 2.0, 2.0, 2.0, 0.0]]])
    items = torch.tensor([[[False, False, True, True, True, False]]])
    one = torch.tensor([[[False, False, True, False, False, False]]])

    each = item_loss(scores, items)
    alone = _shared_softmax_loss(scores.masked_fill(items & ~one, -1e4), one)

    # Each item scores against "no value" and the other words as a line's one value would.
    assert float(each) == pytest.approx(float(alone))
    # The shared softmax's loss of the three items is satisfied at a third of the mass each.
    assert float(_shared_softmax_loss(scores, items)) < float(each)


def test_a_list_items_loss_of_one_gold_position_is_the_shared_softmaxs() -> None:
    scores = torch.tensor([[[1.0, 0.5, 3.0, -1.0]]])
    no_value = torch.tensor([[[True, False, False, False]]])
    value = torch.tensor([[[False, False, True, False]]])

    for gold in (no_value, value):
        assert float(item_loss(scores, gold)) == pytest.approx(
            float(_shared_softmax_loss(scores, gold))
        )


def test_list_items_change_the_loss_only_of_a_list_field_stating_several_items() -> None:
    tokens = FieldsTokens(load_tokenizer(TOKENIZER))
    line = "I need a garden, a garage and two bathrooms"
    spans = tuple(
        (line.index(w), line.index(w) + len(w)) for w in ("garden", "garage", "two bathrooms")
    )
    several = [FieldAsked("must_haves", True, spans, (False,) * 4)]
    single = [FieldAsked("must_haves", True, spans[:1], (False,) * 4)]
    torch.manual_seed(0)
    reader = FieldsReader(layers=1, width=32, heads=2).eval()  # no dropout between losses

    def loss(fields: list[FieldAsked], items: bool) -> float:
        batch = tokens.encode(fields, line, "What must it have?", None)
        return float(line_loss(reader, batch, list_items=items).detach())

    assert loss(single, True) == pytest.approx(loss(single, False))
    assert loss(several, True) > loss(several, False)


def test_a_run_keeps_a_checkpoint_of_each_finished_epoch_when_asked(tmp_path: Path) -> None:
    tokens = FieldsTokens(load_tokenizer(TOKENIZER))
    fields = [FieldAsked("budget", False, (), (False,) * 4)]
    examples = tokens.encode(fields, LINE, "Who is this?", None)
    torch.manual_seed(0)
    reader = FieldsReader(layers=1, width=32, heads=2)

    budget = Budget(seconds=120, epochs=2, batch=4, epoch_checkpoints=True)
    fit(reader, examples, budget, tmp_path, line_loss, line_length)

    assert sorted(p.name for p in tmp_path.glob("reader*.pt")) == [
        "reader-epoch1.pt",
        "reader-epoch2.pt",
        "reader.pt",
    ]


def test_a_reader_that_asks_with_its_fields_words_is_loaded_asking_the_same_way(
    tmp_path: Path,
) -> None:
    torch.manual_seed(0)
    reader = FieldsReader(layers=1, width=64, heads=2)  # heads as wide as the base's
    reader.use_field_words()
    torch.save(reader.state_dict(), tmp_path / "reader.pt")

    loaded = load_reader(tmp_path / "reader.pt")

    assert isinstance(loaded, FieldsReader)
    assert loaded.pools_field_words
    tokens = FieldsTokens(load_tokenizer(TOKENIZER))
    fields = [FieldAsked("name", False, (), (False,) * 4)]
    asked = LineAsked("c", 0, 1, LINE, "Who is this?")
    floor = -1e9
    assert read_lines(loaded, tokens, [(asked, fields)], floor=floor) == read_lines(
        reader, tokens, [(asked, fields)], floor=floor
    )


def test_a_reader_asking_with_its_fields_words_exports_to_onnx_scoring_as_in_torch(
    tmp_path: Path,
) -> None:
    import onnxruntime

    from factledger.bench.judgement.qa_reader.export import FLOAT_FILE, INT8_FILE, export

    torch.manual_seed(0)
    reader = FieldsReader(layers=1, width=64, heads=2)
    reader.use_field_words()
    tokens = FieldsTokens(load_tokenizer(TOKENIZER))
    fields = [
        FieldAsked("name", False, (), (False,) * 4),
        FieldAsked("budget", False, (), (False,) * 4),
    ]
    batch = tokens.encode(fields, LINE, "Who is this?", None)

    digests = export(reader, tmp_path)

    x = line_inputs(batch)
    start, end, _ = reader.read(x["ids"], x["types"], x["attention"], x["markers"], x["pool"])
    session = onnxruntime.InferenceSession(str(tmp_path / FLOAT_FILE))
    feed = {n: x[n].numpy() for n in ("ids", "types", "attention")} | {"pool": x["pool"].numpy()}
    got_start, got_end = session.run(None, feed)
    assert np.allclose(got_start, start.detach().numpy(), atol=1e-4)
    assert np.allclose(got_end, end.detach().numpy(), atol=1e-4)
    assert set(digests) == {FLOAT_FILE, INT8_FILE}
    assert (tmp_path / INT8_FILE).stat().st_size < (tmp_path / FLOAT_FILE).stat().st_size
