"""The shipped secret head (ADR 0185): it loads offline from the package (SHA-256 pinned),
over the packaged multilingual encoder, reads secrets the detectors miss (another language,
a code with no credential word) and leaves alone the messages that only speak of one or give
a number that opens nothing; as a safety filter it withholds them as `credential`, after the
detectors' own verdict. None of these messages is in the head's training lines."""

from __future__ import annotations

import pytest

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.judgement.heads import Heads, HeadsIntegrityError
from factledger.adapters.judgement.judge import EmbedderMismatchError
from factledger.adapters.judgement.secrets import (
    HEAD,
    PACKAGED_SECRET_HEAD,
    PACKAGED_SECRET_HEAD_SHA256,
    LearnedSecretDetector,
)
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.application.sessions.secret_screen import SECRET_MIN, SecretScreen
from factledger.domain.transcript import Message, Role

# The detectors let each of these through: no format they know, no English credential word.
SECRETS = (
    "Der Code für das Gartentor ist 7731, falls niemand aufmacht.",
    "Mi contraseña del banco es lunes2024, no se la digas a nadie.",
    "The lockbox on the side door opens with 5-2-9-1.",
    "Il PIN della carta è 8352.",
    "Hasło do mojego konta to Kasztan!42.",
    "暗証番号は5813です。",
    "Код от домофона 2741, заходите.",
)
NOT_SECRETS = (
    "Der Termin am Dienstag um 10 Uhr passt mir gut.",
    "Mi pedido número 48213 todavía no ha llegado.",
    "Je voudrais réinitialiser mon code PIN, je l'ai oublié.",
    "Can you resend the one-time code? It never arrived.",
    "Il mio numero di polizza è 55-221-903.",
    "We moved to Supplier B in March.",
    "明日の午後三時に伺います。",
)


@pytest.fixture(scope="module")
def detector() -> LearnedSecretDetector:
    return LearnedSecretDetector.packaged()


async def test_secrets_the_detectors_miss_are_read_as_secrets(
    detector: LearnedSecretDetector,
) -> None:
    detectors = DetectorSafetyFilter()
    for text in SECRETS:
        assert (await detectors.screen(Message(Role.SUBJECT, text))).allowed, text
    p = await detector.secret_p(list(SECRETS))
    assert all(x >= SECRET_MIN for x in p), list(zip(SECRETS, p, strict=True))


async def test_messages_that_only_speak_of_a_secret_or_give_a_number_are_not(
    detector: LearnedSecretDetector,
) -> None:
    p = await detector.secret_p(list(NOT_SECRETS))
    assert all(x < SECRET_MIN for x in p), list(zip(NOT_SECRETS, p, strict=True))


async def test_a_secret_after_a_plain_sentence_is_not_averaged_away(
    detector: LearnedSecretDetector,
) -> None:
    (alone,) = await detector.secret_p([NOT_SECRETS[0]])
    (p,) = await detector.secret_p([f"{NOT_SECRETS[0]} {SECRETS[0]}"])
    assert alone < SECRET_MIN <= p


async def test_as_a_safety_filter_it_withholds_secrets_as_credentials(
    detector: LearnedSecretDetector,
) -> None:
    screen = SecretScreen(DetectorSafetyFilter(), detector)
    refused = await screen.screen(Message(Role.SUBJECT, SECRETS[1]))
    assert (refused.allowed, refused.category) == (False, "credential")
    assert (await screen.screen(Message(Role.SUBJECT, NOT_SECRETS[1]))).allowed
    card = await screen.screen(Message(Role.SUBJECT, "card 4111-1111-1111-1111 please"))
    assert card.category == "payment_card"  # the inner filter's verdict comes first


def test_the_head_file_is_checked_against_its_pin() -> None:
    with pytest.raises(HeadsIntegrityError):
        Heads.load(PACKAGED_SECRET_HEAD, "0" * 64, (HEAD,))


def test_the_head_refuses_an_embedder_it_was_not_fitted_over() -> None:
    heads = Heads.load(PACKAGED_SECRET_HEAD, PACKAGED_SECRET_HEAD_SHA256, (HEAD,))
    with pytest.raises(EmbedderMismatchError, match="secret head"):
        LearnedSecretDetector(OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET)), heads)
