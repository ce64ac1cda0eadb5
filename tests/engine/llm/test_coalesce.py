"""Concurrent small encodes share one forward pass (engine/embed/coalesce.py, issue 30): callers
arriving while a forward runs are served together by the next one, each gets its own rows, a
failure reaches exactly the callers of its forward, and bulk calls go straight through."""

from __future__ import annotations

import threading
import time

import numpy as np

from engine.embed.coalesce import CoalescingEncoder


class SlowEncoder:
    """Rows of [len(text), index]; the first forward waits until `release` is set."""

    def __init__(self):
        self.batches: list[list[str]] = []
        self.release = threading.Event()
        self.fail_on = ""

    def encode(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        if len(self.batches) == 1:
            assert self.release.wait(10)
        if self.fail_on and self.fail_on in texts:
            raise RuntimeError(f"cannot encode {self.fail_on!r}")
        return np.array([[len(t), i] for i, t in enumerate(texts)], np.float32)


def _ask(enc: CoalescingEncoder, texts: list[str], out: dict, key: str) -> threading.Thread:
    def run() -> None:
        try:
            out[key] = enc.encode(texts)
        except RuntimeError as exc:
            out[key] = exc

    t = threading.Thread(target=run)
    t.start()
    return t


def _wait_queued(enc: CoalescingEncoder, n: int) -> None:
    end = time.monotonic() + 10
    while len(enc._queue) < n:
        assert time.monotonic() < end, "callers never queued"
        time.sleep(0.005)


def test_callers_arriving_during_a_forward_share_the_next_one():
    inner = SlowEncoder()
    enc = CoalescingEncoder(inner.encode)
    out: dict = {}
    first = _ask(enc, ["a question"], out, "first")
    while not inner.batches:
        time.sleep(0.005)
    others = [_ask(enc, texts, out, key) for key, texts in (("x", ["ab", "abc"]), ("y", ["abcd"]))]
    _wait_queued(enc, 2)
    inner.release.set()
    for t in [first, *others]:
        t.join(10)
    assert len(inner.batches) == 2 and sorted(map(len, inner.batches)) == [1, 3]  # 3 calls, 2 forwards
    assert out["first"].tolist() == [[10, 0]]
    # each caller its own rows, in its own order, whichever order they queued in
    assert [r[0] for r in out["x"].tolist()] == [2, 3] and [r[0] for r in out["y"].tolist()] == [4]
    assert (enc.forwards, enc.calls) == (2, 3) and not enc._running


def test_alone_a_call_runs_at_once_and_bulk_goes_straight_through():
    inner = SlowEncoder()
    inner.release.set()
    enc = CoalescingEncoder(inner.encode, max_texts=4)
    assert enc.encode(["one"]).tolist() == [[3, 0]]
    assert enc.encode([f"t{i}" for i in range(10)]).shape == (10, 2)  # bulk: not queued
    assert (enc.forwards, enc.calls) == (1, 1) and len(inner.batches) == 2


def test_a_failed_forward_fails_its_callers_only():
    inner = SlowEncoder()
    inner.fail_on = "bad"
    enc = CoalescingEncoder(inner.encode)
    out: dict = {}
    first = _ask(enc, ["fine"], out, "first")
    while not inner.batches:
        time.sleep(0.005)
    others = [_ask(enc, ["bad"], out, "bad"), _ask(enc, ["also fine"], out, "peer")]
    _wait_queued(enc, 2)
    inner.release.set()
    for t in [first, *others]:
        t.join(10)
    assert out["first"].tolist() == [[4, 0]]
    assert isinstance(out["bad"], RuntimeError) and isinstance(out["peer"], RuntimeError)  # one forward
    assert not enc._running
    assert enc.encode(["after"]).tolist() == [[5, 0]]  # the queue goes on


def test_the_bundled_embedder_gives_the_same_vectors_coalesced(embedder):
    """Real model: texts encoded together in a shared forward equal their separate encodes."""
    texts = ["Who directed the film shot in Leland?", "born in", "place of birth of the director"]
    alone = np.stack([embedder._light.encode([t])[0] for t in texts])
    out: dict = {}
    threads = [_ask(embedder._small, [t], out, t) for t in texts]
    for t in threads:
        t.join(30)
    together = np.stack([out[t][0] for t in texts])
    assert np.abs(together - alone).max() < 1e-4
    assert np.abs(together[0] - together[1]).max() > 1e-2  # and each caller got its own text's row


def test_reasoners_over_one_embedder_share_their_relation_phrase_vectors():
    """Each question builds its own reasoner; the relation phrases it scores ("born in") recur, so
    their vectors are kept per embedder object, not per reasoner."""
    from engine.reasoners.offline.match import RelationScorer
    from tests._fake_embedder import HashEmbedder

    class Counting(HashEmbedder):
        def __init__(self):
            super().__init__()
            self.texts: list[str] = []

        def encode(self, texts, batch_size: int = 64):
            self.texts += list(texts)
            return super().encode(texts, batch_size)

    emb = Counting()
    RelationScorer(emb).score("born in", ["was born in", "full name"])
    first = len(emb.texts)
    RelationScorer(emb).score("born in", ["was born in", "full name"])
    assert first and len(emb.texts) == first  # the second question encoded nothing again
    other = Counting()
    RelationScorer(other).score("born in", ["full name"])
    assert other.texts  # another embedder (another model) never reads this one's vectors
