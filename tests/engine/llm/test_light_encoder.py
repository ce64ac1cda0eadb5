"""Questions are encoded without torch, to the same vectors, and `ask` never imports torch.

The numpy MiniLM (engine/embed/numpy_minilm.py) must give the torch model's vectors: a user's
corpus was indexed by sentence-transformers and is searched with numpy-encoded questions, so any
drift would change which chunks a question finds. The texts are real HotpotQA and MuSiQue
questions and paragraphs from tests/fixtures/qa (attribution there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from engine.embed.bundled import BULK_AT
from tests.conftest import REPO, SHARED_DATA

#: Modules a question must not need (importing torch alone is seconds of a cold `ask`).
HEAVY = ("torch", "transformers", "sentence_transformers", "litellm", "plotly", "pandas", "streamlit")


def _fixture_texts() -> tuple[list[str], list[str]]:
    hotpot = json.loads((SHARED_DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json").read_text())
    musique = json.loads((SHARED_DATA / "musique_kag_100" / "musique_qa_100.json").read_text())
    questions = [r["question"] for r in hotpot[:40]] + [r["question"] for r in musique[:20]]
    paragraphs = ["".join(sents) for r in hotpot[:4] for _, sents in r["context"][:3]]
    return questions, paragraphs


@pytest.fixture(scope="module")
def torch_model(embedder):
    return embedder.model  # the sentence-transformers model of the same verified weights


def test_light_vectors_match_the_torch_model(embedder, torch_model):
    questions, paragraphs = _fixture_texts()
    long_text = " ".join(paragraphs)  # far past 256 tokens: both must cut it at the same place
    texts = questions + paragraphs + [long_text, "Café Müller in Zürich — 1978?", ""]
    light = embedder.encode(texts)
    full = torch_model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    assert light.shape == full.shape == (len(texts), 384)
    assert light.dtype == np.float32
    assert float(np.abs(light - full).max()) <= 1e-4
    assert np.allclose(np.linalg.norm(light, axis=1), 1.0, atol=1e-5)


def test_a_question_gets_the_same_vector_alone_or_in_a_batch(embedder):
    questions, _ = _fixture_texts()
    batch = embedder.encode(questions[:12])
    alone = np.stack([embedder.encode([q])[0] for q in questions[:12]])
    assert float(np.abs(batch - alone).max()) <= 1e-5


def test_the_same_chunks_are_found_with_either_encoder(embedder, torch_model):
    questions, _ = _fixture_texts()
    corpus = json.loads((SHARED_DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train_corpus.json").read_text())
    docs = [f"{title}\n{''.join(sents)}" for title, sents in list(corpus.items())[:300]]
    index = embedder.encode(docs)  # 300 texts >= BULK_AT: the torch path, as index building uses
    assert len(docs) >= BULK_AT
    light = embedder.encode(questions)
    full = torch_model.encode(questions, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    top_light = np.argsort(-(light @ index.T), axis=1)[:, :10]
    top_full = np.argsort(-(full @ index.T), axis=1)[:, :10]
    assert (top_light == top_full).all()


def test_concurrent_questions_get_their_own_vectors(embedder):
    questions, _ = _fixture_texts()
    expected = {q: embedder.encode([q])[0] for q in questions[:8]}
    got: dict[str, np.ndarray] = {}

    def ask(q: str) -> None:
        for _ in range(3):
            got[q] = embedder.encode([q])[0]

    threads = [threading.Thread(target=ask, args=(q,)) for q in questions[:8]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(float(np.abs(got[q] - v).max()) <= 1e-6 for q, v in expected.items())


def test_ask_from_the_command_line_does_not_import_torch(tmp_path, embedder):
    from engine.core.types import Document
    from engine.store import Workspace

    ws = Workspace(tmp_path / "ws", embedder=embedder)
    corpus = ws.create("tiny")
    corpus.add_documents(
        [
            Document(
                "d1",
                "Arthur's Magazine",
                "Arthur's Magazine was an American literary periodical first published in Philadelphia in 1844.",
                "test",
                "text",
            ),
            Document(
                "d2",
                "First for Women",
                "First for Women is a woman's magazine published by Bauer Media "
                "Group in the USA. The magazine was started in 1989.",
                "test",
                "text",
            ),
        ]
    )
    corpus.close()
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['engine', 'ask', 'tiny', 'Which magazine was started first?', '--method', 'semantic']\n"
        "try:\n    runpy.run_module('engine', run_name='__main__')\n"
        "except SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print('HEAVY', ','.join(heavy), 'EXIT', code)\n"
    )
    env = dict(os.environ, TRIPLET_LENS_WORKSPACE=str(tmp_path / "ws"), OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    answer = [x for x in p.stdout.splitlines() if x.startswith("answer:")]
    assert answer and answer[0] != "answer:", p.stdout + p.stderr  # an answer was printed
    assert "dense: 2 chunks" in p.stdout  # the question found both chunks of the tiny corpus
    line = [x for x in p.stdout.splitlines() if x.startswith("HEAVY")][-1]
    assert line == "HEAVY  EXIT 0", f"a question imported {line}"
