"""The secret head's trainer (ADR 0185): a writer's labelled messages train it, those an
evaluation set also holds left out; the training writers' conversations give their subject
lines' pieces as messages that disclose nothing; the file it writes loads as the session
path's detector does, pinned by the SHA-256 it prints, and reads what it was fitted on."""

from __future__ import annotations

from pathlib import Path

import yaml

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.secrets import HEAD, LearnedSecretDetector
from factledger.application.sessions.secret_screen import SECRET_MIN
from factledger.bench.judgement.secrets import train_secret_head, training_lines

SECRETS = ["Das Passwort ist Kiefer77!", "gate code 4471", "PIN 8820 for the card"]
PLAIN = ["I forgot my PIN.", "Order 88213 is late.", "Flight BA2490 lands at 18:45."]


def lines_dir(folder: Path, secrets: list[str], plain: list[str]) -> Path:
    folder.mkdir(parents=True)
    items = [
        {"id": f"{label}-{i}", "lang": "en", "text": t, "secret": label == "s", "kind": "k"}
        for label, texts in (("s", secrets), ("p", plain))
        for i, t in enumerate(texts)
    ]
    (folder / "lines-01.yaml").write_text(yaml.safe_dump(items, allow_unicode=True))
    return folder


def test_messages_an_evaluation_set_holds_train_nothing(tmp_path: Path) -> None:
    corpus = lines_dir(tmp_path / "corpus", SECRETS, PLAIN)
    held = lines_dir(tmp_path / "eval", [SECRETS[1]], [])
    texts, labels, left_out = training_lines([corpus], [held])
    assert left_out == 1
    assert SECRETS[1] not in texts
    assert labels == ["true", "true", "false", "false", "false"]


async def test_the_written_head_loads_pinned_and_reads_its_training_secrets(
    tmp_path: Path,
) -> None:
    corpus = lines_dir(tmp_path / "corpus", SECRETS, PLAIN)
    conversation = {
        "id": "c-1",
        "sessions": [{"lines": [{"role": "subject", "text": "We moved. The new flat is nice."}]}],
    }
    (tmp_path / "talk").mkdir()
    (tmp_path / "talk" / "cases-a.yaml").write_text(yaml.safe_dump([conversation]))
    embedder = HashingEmbedder(64)
    out = tmp_path / "secret-head.npz"

    done = await train_secret_head(embedder, [corpus], out, conversations=[tmp_path / "talk"])

    assert done["conversation_lines"] == 1  # one line, once
    done = await train_secret_head(
        embedder, [corpus], out, conversations=[tmp_path / "talk"], as_pieces=True
    )
    assert (done["messages"], done["conversation_lines"]) == (8, 2)  # two pieces
    detector = LearnedSecretDetector(embedder, Heads.load(out, str(done["sha256"]), (HEAD,)))
    read = await detector.secret_p([*SECRETS, *PLAIN])
    assert all(p >= SECRET_MIN for p in read[:3]), read
    assert all(p < SECRET_MIN for p in read[3:]), read


async def test_values_train_it_read_after_their_field_and_an_evaluation_sets_are_left_out(
    tmp_path: Path,
) -> None:
    corpus = lines_dir(tmp_path / "corpus", SECRETS, PLAIN)
    values = tmp_path / "values"
    values.mkdir()
    items = [
        {"id": "v1", "lang": "en", "field": "gate_code", "text": "4471", "secret": True},
        {"id": "v2", "lang": "en", "field": "order_id", "text": "88213", "secret": False},
    ]
    (values / "lines-01.yaml").write_text(yaml.safe_dump(items))
    held = tmp_path / "eval"
    held.mkdir()
    (held / "lines-01.yaml").write_text(yaml.safe_dump([{**items[1], "id": "e1"}]))
    embedder = HashingEmbedder(64)
    out = tmp_path / "value-head.npz"

    done = await train_secret_head(embedder, [corpus], out, [held], values=[values], l2=1e-4)

    assert (done["messages"], done["left_out"]) == (7, 1)  # six lines, one value of two
    detector = LearnedSecretDetector(embedder, Heads.load(out, str(done["sha256"]), (HEAD,)))
    (p,) = await detector.secret_p(["gate code: 4471"])
    assert p >= SECRET_MIN
