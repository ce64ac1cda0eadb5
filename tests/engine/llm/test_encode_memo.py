"""A question's texts are encoded once (engine/embed/memo.py, issue 30): inside `one_question` a
text asked for again comes from the memo with the same row, only new texts reach the encoder, the
memo ends with the question and belongs to its thread; a session's question passes through it."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine.embed.memo import encode_once, one_question
from engine.session import Session
from engine.store import Workspace
from tests._app_helpers import build_small_corpus


class Counting:
    def __init__(self):
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[len(t), sum(map(ord, t))] for t in texts], np.float32)


def test_inside_a_question_each_text_is_encoded_once():
    enc = Counting()
    with one_question():
        first = encode_once(enc, enc.encode, ["who", "what", "who"])
        second = encode_once(enc, enc.encode, ["what", "where"])
    assert enc.calls == [["who", "what"], ["where"]]
    assert first.tolist() == enc.encode(["who", "what", "who"]).tolist()
    assert second.tolist() == enc.encode(["what", "where"]).tolist()


def test_outside_a_question_and_after_it_every_call_encodes():
    enc = Counting()
    encode_once(enc, enc.encode, ["who"])
    with one_question():
        encode_once(enc, enc.encode, ["who"])
    encode_once(enc, enc.encode, ["who"])
    with one_question():  # a new question starts empty
        encode_once(enc, enc.encode, ["who"])
    assert enc.calls == [["who"]] * 4
    with one_question():  # nothing to encode: the encoder's own empty answer
        assert encode_once(enc, enc.encode, []).shape == enc.encode([]).shape


def test_two_encoders_and_two_threads_do_not_share_a_memo():
    a, b = Counting(), Counting()
    with one_question():
        encode_once(a, a.encode, ["x"])
        encode_once(b, b.encode, ["x"])  # same text, another encoder: its own row
        t = threading.Thread(target=encode_once, args=(a, a.encode, ["x"]))
        t.start()
        t.join()
        encode_once(a, a.encode, ["x"])  # this thread's memo still has it
    assert b.calls == [["x"]]
    assert a.calls == [["x"], ["x"]]  # the other thread has no memo: it encoded again


@pytest.mark.timeout(300)
def test_no_text_reaches_the_encoder_twice_in_one_question(tmp_path, embedder, monkeypatch):
    """Without the memo, KG2RAG embedded a question for its seed chunks and again to pick the
    answer's sentences, and T2RAG searched a proposition again in a later round (both happen among
    these six HotpotQA questions); through a session each text is encoded once per question."""
    build_small_corpus(tmp_path, "hotpotqa-sample", questions=6, embedder=embedder)
    corpus = Workspace(tmp_path, embedder=embedder).open("hotpotqa-sample")
    asked: list[str] = []
    inner = embedder._small.encode  # below the memo: what reaches the forward pass

    def counting(texts):
        asked.extend(texts)
        return inner(texts)

    monkeypatch.setattr(embedder._small, "encode", counting)
    for q in corpus.questions():
        for method in ("kg2rag", "t2rag"):
            asked.clear()
            first = Session(workspace=tmp_path).answer(method, q.question, corpus)
            assert asked and len(asked) == len(set(asked)), (method, q.question)
            asked.clear()
            again = Session(workspace=tmp_path).answer(method, q.question, corpus)
            assert q.question.strip() in asked or method == "t2rag"  # the memo ended with the question
            assert (again.answer, again.evidence_chunk_ids) == (first.answer, first.evidence_chunk_ids)
