"""Claims come from runs: what the landing card and the README say about a question is checked by
running that question at the default presets on the bundled HotpotQA sample, built here exactly as
`python -m engine sample ensure` builds it.

* Showcase captions (components/shell/showcase.py) are computed from a comparison; each claim in
  them (right or wrong, the answer, the step where each gold paragraph was first seen) is checked
  against a second run read directly from the traces, and the landing card shows those words.
* The first showcase question still tells its story: the two methods differ, T2RAG runs two rounds.
* Every example command in the README's "Try it" block is run through the CLI and its comment
  checked: the answer printed, whether it is the gold answer, and each quoted step ("?city=..." in
  round 1). Before: the README said KG2RAG answers "Australian" (it answered Ballina) and the
  showcase promised "Both right" where Compare's verdict said KG2RAG was wrong.
"""

from __future__ import annotations

import re
import shlex

import pytest

from tests._app_helpers import REPO

pytestmark = pytest.mark.timeout(900)

SAMPLE = "hotpotqa-sample"


@pytest.fixture(scope="module")
def sample_root(tmp_path_factory, embedder):
    """A workspace holding the bundled HotpotQA sample, built by the sample builder itself."""
    from engine.session.samples import build_sample
    from engine.store import Workspace

    root = tmp_path_factory.mktemp("claims_ws")
    build_sample(Workspace(root, embedder=embedder), SAMPLE)
    return root


@pytest.fixture(scope="module")
def sample(sample_root, embedder):
    from engine.store import Workspace

    corpus = Workspace(sample_root, embedder=embedder).open(SAMPLE)
    yield corpus
    corpus.close()


def _question(corpus, qid: str):
    return next(q for q in corpus.questions() if q.qid == qid)


def _run_plainly(corpus, q, methods=("t2rag", "kg2rag")):
    """The methods at their default presets through the engine's one path, as the CLI runs them."""
    from engine.core.config import AppSettings
    from engine.session import Session

    session = Session.for_cli(AppSettings.from_env(), model="")
    reasoner = session.reasoner(corpus)
    return {m: session.answer(m, q.question, corpus, reasoner=reasoner) for m in methods}


def _first_seen(result, titles: set[str], corpus) -> dict[str, str]:
    """Gold title -> the first step (its view's label) that showed one of its chunks, read off the
    trace's own steps."""
    out: dict[str, str] = {}
    for stage in result.trace.verdict_stages():
        for chunk in corpus.get_chunks(list(stage.seen)):
            if chunk.title in titles:
                out.setdefault(chunk.title, stage.label)
    return out


def _clauses(caption: str) -> dict[str, str]:
    """method title -> its clause of a caption ('Lead: T2RAG ...; KG2RAG ...')."""
    body = caption.split(": ", 1)[1]
    return {part.split(" ", 1)[0]: part for part in body.split("; ")}


def test_each_showcase_caption_says_what_the_default_presets_do(sample):
    from components.shell.landing import SHOWCASE
    from components.shell.showcase import default_settings, showcase_caption
    from engine.eval.metrics import answer_score

    for s in SHOWCASE:
        q = _question(sample, s.qid)
        caption = showcase_caption(sample, q, default_settings())
        results = _run_plainly(sample, q)
        scores = {m: answer_score(r.answer, list(q.answers)) for m, r in results.items()}
        right = {m for m, sc in scores.items() if sc.em == 1}
        lead = caption.split(":", 1)[0]
        assert lead == ("Both right" if len(right) == 2 else "Both wrong" if not right else "The methods differ"), (
            caption
        )
        clauses = _clauses(caption)
        for m, r in results.items():
            clause = clauses[{"t2rag": "T2RAG", "kg2rag": "KG2RAG"}[m]]
            assert f"(“{r.answer}”)" in clause, (caption, r.answer)
            if lead == "The methods differ":
                assert clause.split(" ")[1] == ("right" if m in right else "wrong"), caption
            seen = _first_seen(r, set(q.supporting_titles), sample)
            missed = set(q.supporting_titles) - set(seen)
            for title in missed:
                assert f"never saw “{title}”" in clause or "saw no gold paragraph" in clause, caption
            if seen and not missed:  # "both gold paragraphs by round 2": the latest first sighting
                latest = max(seen.values(), key=lambda label: (int(re.sub(r"\D", "", label) or 0), label))
                assert clause.endswith(latest) or f"{latest}," in clause, (caption, seen)
            for title, where in seen.items():
                if missed:
                    assert f"“{title}” in {where}" in clause, (caption, seen)


def test_the_start_here_question_shows_the_methods_apart_and_t2rag_needs_two_rounds(sample):
    from components.shell.landing import SHOWCASE, showcase_for
    from engine.eval.metrics import answer_score

    offered = showcase_for(sample)  # every showcase question is on the sample corpus's card
    assert [q.qid for q, _ in offered] == [s.qid for s in SHOWCASE] and all(q.answers for q, _ in offered)
    q = _question(sample, SHOWCASE[0].qid)
    results = _run_plainly(sample, q)
    assert len(results["t2rag"].trace.rounds) >= 2, results["t2rag"].trace.stop_reason
    ems = {m: answer_score(r.answer, list(q.answers)).em for m, r in results.items()}
    assert ems["t2rag"] != ems["kg2rag"], {m: r.answer for m, r in results.items()}


def _readme_examples() -> list[tuple[list[str], str]]:
    """(CLI arguments, the comment under it) for each command of the README's "Try it" block."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("Try it on the sample corpus", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = [x for x in block.splitlines() if x.strip()]
    out = []
    for cmd, comment in zip(lines[::2], lines[1::2]):
        args = shlex.split(cmd)
        assert args[:3] == [".venv/bin/python", "-m", "engine"], cmd
        assert comment.strip().startswith("# answer: "), comment
        out.append((args[3:], comment.strip()[2:]))
    return out


def test_every_readme_example_prints_what_its_comment_says(sample_root, sample, monkeypatch, capsys):
    from engine.cli import main
    from engine.eval.metrics import answer_score

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(sample_root))
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    examples = _readme_examples()
    assert len(examples) >= 3
    by_text = {q.question: q for q in sample.questions()}
    for args, comment in examples:
        assert main([*args, "--quiet"]) == 0, args
        out = capsys.readouterr().out
        printed = next(line for line in out.splitlines() if line.startswith("answer: "))[len("answer: ") :]
        claimed = re.match(r"answer: (.+?) \((the|not the) gold answer\)", comment)
        assert claimed, comment
        assert printed == claimed.group(1), (args, out[:600])
        gold = list(by_text[args[2]].answers)
        assert (answer_score(printed, gold).em == 1) == (claimed.group(2) == "the"), (comment, gold)
        for fragment, n in re.findall(r'"([^"]+)" in round (\d+)', comment):
            round_line = next((x for x in out.splitlines() if x.strip().startswith(f"round {n}:")), "")
            assert fragment in round_line, (comment, round_line)


def test_the_landing_card_shows_the_computed_captions(sample_root, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from components.shell.landing import SHOWCASE
    from tests._apptest import APP
    from tests._apptest import ok as _ok

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(sample_root))
    monkeypatch.delenv("TRIPLET_LENS_DEMO", raising=False)
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    _ok(at)
    shown = [
        m.group(1) for h in at.get("html") for m in re.finditer(r"tl-showcase-caption[^>]*>([^<]+)<", h.proto.body)
    ]
    from components.shell.showcase import default_settings, showcase_caption
    from engine.store import Workspace

    corpus = Workspace(sample_root).open(SAMPLE)
    try:
        want = [showcase_caption(corpus, _question(corpus, s.qid), default_settings()) for s in SHOWCASE]
    finally:
        corpus.close()
    import html

    assert [html.unescape(x) for x in shown] == want
    assert any("offline reasoner, T2RAG tuned · KG2RAG tuned" in c.value for c in at.caption)
