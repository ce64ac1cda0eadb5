"""HippoRAG 2 (Gutiérrez et al. 2025, "From RAG to Memory: Non-Parametric Continual Learning for
Large Language Models"), as the authors' `HippoRAG.retrieve` + `HippoRAG.qa` run it
(OSU-NLP-Group/HippoRAG `src/hipporag/HippoRAG.py`), over the triplets the corpus already stores:

1. facts retrieved: every fact scored by cosine with the question, min-max normalized over all
   facts (`get_fact_scores`); the `linking_top_k` best are the candidates (`rerank_facts`);
2. facts kept: recognition memory, an LLM filter of the candidates (`DSPyFilter`, with the authors'
   prompt and demonstrations; memory.py). The offline reasoner cannot filter: it keeps every
   candidate, and the trace names that as a departure of the run;
3. seed nodes: phrases of the kept facts (score / chunks the phrase occurs in, averaged, top
   `linking_top_k`) and every passage (min-max normalized dense score x `passage_node_weight`)
   (`graph_search_with_fact_entities`); no fact kept: the passages are ranked by dense score alone,
   as the authors' code falls back;
4. Personalized PageRank over the phrase/passage graph (graph.py: numpy/scipy power iteration),
   passages ranked by their PPR score (`run_ppr`);
5. the answer step reads the best `qa_top_k` passages through the reasoner every baseline uses.

The graph's phrase nodes and synonym edges are kept with the corpus (engine/store/phrase_graph.py);
a corpus made before that gets them on its first question, reported through `on_step`.

    result = HippoRAG2(reasoner).answer("Who directed ...?", corpus, HippoRAG2Settings.paper())
"""

from __future__ import annotations

import time
from collections.abc import Collection

import numpy as np

from engine.core.progress import Throttle
from engine.llm.base import LLMCall, LLMError
from engine.methods.base import MethodDefaults, Result, StepCallback, Usage, register_trace
from engine.methods.common import answer_step, format_context
from engine.methods.hipporag2 import departures
from engine.methods.hipporag2.graph import (
    min_max_normalize,
    passage_key,
    personalized_pagerank,
    phrase_seeds,
    reset_vector,
)
from engine.methods.hipporag2.index import HippoIndex, corpus_index
from engine.methods.hipporag2.memory import filter_messages, match_candidates, parse_filter
from engine.methods.hipporag2.trace import (
    FILTER_SKIPPED_OFFLINE,
    FILTER_SWITCHED_OFF,
    ChunkRef,
    Fact,
    HippoRAG2Settings,
    HippoRAG2Trace,
    PPREdge,
    PPRNode,
    RankedPassage,
    SeedNode,
)
from engine.methods.inputs import PaperInputs
from engine.methods.presets import describe
from engine.reasoners.base import Reasoner
from engine.store.protocol import CorpusView

register_trace("hipporag2", HippoRAG2Trace)

PPR_SHOWN = 25  # top-scored nodes the trace keeps for the PPR graph
RANKED_NAMED = 10  # ranked passages the trace names (the view lists this many)


class HippoRAG2(MethodDefaults):
    name = "hipporag2"
    settings_cls = HippoRAG2Settings
    trace_cls = HippoRAG2Trace
    whatif_knobs = {"qa_top_k": (1, 20)}
    preset_reasons = departures.REASONS
    preset_fixes = departures.FIXES
    run_departures = departures.RUN_DEPARTURES
    paper_inputs = PaperInputs(
        embedder=("nvidia/NV-Embed-v2",),
        triplets=("meta-llama/Llama-3.3-70B-Instruct", "gpt-4o-mini"),
        reasoner=("meta-llama/Llama-3.3-70B-Instruct", "gpt-4o-mini"),
        source="OSU-NLP-Group/HippoRAG src/hipporag/utils/config_utils.py (embedding_model_name, llm_name); "
        "the paper's main runs: Llama-3.3-70B-Instruct",
    )

    def __init__(self, reasoner: Reasoner, reranker=None):
        self.reasoner = reasoner

    @staticmethod
    def warm(corpus: CorpusView, settings: HippoRAG2Settings | None = None) -> None:
        """Load (or build) the corpus's index now, so the first question does not wait for it."""
        s = settings or HippoRAG2Settings()
        corpus_index(corpus, s.synonymy_edge_topk, s.synonymy_edge_sim_threshold)

    def answer(
        self,
        question: str,
        corpus: CorpusView,
        settings: HippoRAG2Settings | None = None,
        on_step: StepCallback | None = None,
    ) -> Result:
        s = settings or HippoRAG2Settings()
        step = on_step or (lambda label, payload: None)
        t0 = time.perf_counter()
        tr = HippoRAG2Trace(question=question, settings=s)
        tr.preset, tr.departures = describe(self.name, s)
        idx, cached = corpus_index(
            corpus, s.synonymy_edge_topk, s.synonymy_edge_sim_threshold, _graph_progress(step, corpus)
        )
        tr.graph = idx.graph.counts()
        tr.index = "in memory (this process)" if cached else idx.how
        tr.timings["index"] = time.perf_counter() - t0
        qvec = np.asarray(corpus.embed([question]), dtype=np.float32)[0]
        fact_scores, lexical = _fact_scores(idx, question, qvec, s.hybrid_facts)
        dense = min_max_normalize(idx.passage_vectors @ qvec) if idx.graph.passages else np.zeros(0)
        tr.facts_retrieved = _candidates(idx, fact_scores, s.linking_top_k, lexical)
        step(f"facts retrieved: {len(tr.facts_retrieved)}", tr.facts_retrieved)
        error = self._recognition_memory(question, tr, s)
        tr.departures = tr.departures + tr.run_departures()
        step(f"facts kept: {len(tr.facts_kept)}", tr.facts_kept)
        t1 = time.perf_counter()
        _rank(idx, tr, s, dense)
        tr.timings["ppr"] = time.perf_counter() - t1
        step(f"ranked passages: {len(tr.ranked)}", tr.ranked)
        ids = tr.chunk_ids()
        tr.context = format_context(corpus.get_chunks(ids)) if ids else ""
        _name_chunks(tr, corpus)
        error = self._answer(question, tr) or error
        tr.timings["total"] = total = time.perf_counter() - t0
        step("answer", tr)
        return Result(
            method=self.name,
            question=question,
            answer=tr.answer,
            usage=Usage.from_calls(tr.calls(), total),
            evidence_chunk_ids=ids,
            stop_reason="answered" if not error else "llm error",
            error=error,
            reasoner=getattr(self.reasoner, "name", ""),
            trace=tr,
        )

    def _recognition_memory(self, question: str, tr: HippoRAG2Trace, s: HippoRAG2Settings) -> str:
        """Keep the facts the LLM filter returns (at most `linking_top_k`); skipped when switched off
        or when the reasoner cannot write free text (every candidate is kept then)."""
        cands = tr.facts_retrieved
        if not s.recognition_memory or not getattr(self.reasoner, "supports_free_text", False):
            tr.filter_skipped = FILTER_SKIPPED_OFFLINE if s.recognition_memory else FILTER_SWITCHED_OFF
            tr.facts_kept = list(cands)
            return ""
        if not cands:
            return ""
        triples = [(f.subject, f.predicate, f.object) for f in cands]
        try:
            reply, tr.filter_call = self.reasoner.chat("filter", filter_messages(question, triples))
        except LLMError as exc:
            tr.filter_call = LLMCall(job="filter", model=getattr(self.reasoner, "name", ""), error=str(exc))
            return f"the recognition-memory step failed: {exc}"
        if tr.filter_call is not None and tr.filter_call.error and not reply:
            return f"the recognition-memory step failed: {tr.filter_call.error}"
        kept = match_candidates(parse_filter(reply), triples)
        tr.facts_kept = [cands[i] for i in kept][: s.linking_top_k]
        return ""

    def _answer(self, question: str, tr: HippoRAG2Trace) -> str:
        t = time.perf_counter()
        tr.answer, tr.call, error = answer_step(self.reasoner, question, tr.context)
        tr.timings["generate"] = time.perf_counter() - t
        return error

    @staticmethod
    def summarize(result: Result) -> list[str]:
        """The CLI's lines for a result: facts, seeds, how the graph was had, context, answer."""
        tr: HippoRAG2Trace | None = result.trace
        lines = []
        if tr is not None:
            lines.append(
                f"facts retrieved: {len(tr.facts_retrieved)}, kept: {len(tr.facts_kept)}"
                + (f" ({tr.filter_skipped})" if tr.filter_skipped else "")
            )
            lines.append(
                f"seeds: {sum(1 for x in tr.seeds if x.kind == 'phrase')} phrases"
                + (f"; {tr.fallback}" if tr.fallback else "")
            )
            if tr.index:
                lines.append(f"graph: {tr.index}")
        if result.error:
            lines.append(f"error: {result.error}")
        lines.append(f"context: {len(result.evidence_chunk_ids)} chunks")
        lines.append(f"answer: {result.answer}")
        return lines


#: How often a graph build reports progress as a step (seconds): a line, not a flood.
PROGRESS_EVERY = 1.0


def _graph_progress(step: StepCallback, corpus: CorpusView):
    """An `on_progress` for the corpus's phrase graph that reports a build as steps (the app's
    status line, the CLI's `..` lines): the first report, then at most one every PROGRESS_EVERY s."""
    throttle = Throttle(PROGRESS_EVERY)
    name = getattr(corpus, "name", "") or "this corpus"

    def report(done: int, total: int, label: str = "") -> None:
        if throttle.due(done, total):
            what = label.removeprefix("HippoRAG 2 graph: ") or "building"
            step(f"building HippoRAG 2's graph of {name} (first use): {what} {done:,}/{total:,}", None)

    return report


def _fact_scores(
    idx: HippoIndex, question: str, qvec: np.ndarray, hybrid: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """Every fact's score (the authors': min-max normalized cosine) and, with `hybrid`, its min-max
    normalized BM25 score, which the score then averages with the cosine's (None without). A
    question sharing no word with any fact is scored by cosine alone."""
    if not idx.facts:
        return np.zeros(0), None
    cosine = min_max_normalize(idx.fact_vectors @ qvec)
    if not hybrid:
        return cosine, None
    bm25 = idx.lexical_scores(question)
    if not bm25.any():
        return cosine, np.zeros_like(cosine)
    lexical = min_max_normalize(bm25)
    return (cosine + lexical) / 2, lexical


def _candidates(idx: HippoIndex, scores: np.ndarray, k: int, lexical: np.ndarray | None = None) -> list[Fact]:
    """The authors' `np.argsort(scores)[-k:][::-1]` (ties: the later fact first)."""
    order = np.argsort(scores)[::-1] if len(scores) <= k else np.argsort(scores)[-k:][::-1]
    out = []
    for i in order.tolist():
        s, p, o = idx.facts[i]
        lex = float(lexical[i]) if lexical is not None else None
        out.append(Fact(s, p, o, float(scores[i]), idx.fact_triplets[i], list(idx.fact_chunks[i]), lex))
    return out


def _rank(idx: HippoIndex, tr: HippoRAG2Trace, s: HippoRAG2Settings, dense: np.ndarray) -> None:
    g = idx.graph
    phrase_w = phrase_seeds(g, [((f.subject, f.predicate, f.object), f.score) for f in tr.facts_kept], s.linking_top_k)
    if not phrase_w:
        tr.fallback = "no fact kept: passages ranked by dense retrieval alone (as the authors' code)"
        order = np.argsort(dense)[::-1][: s.retrieval_top_k].tolist()
        tr.ranked = _passages(g.passages, order, dense, dense)
        return
    passage_w = {cid: float(dense[j]) * s.passage_node_weight for j, cid in enumerate(g.passages)}
    tr.seeds = [SeedNode(p, "phrase", w) for p, w in phrase_w.items() if w > 0]
    tr.seeds += sorted((SeedNode(c, "passage", w) for c, w in passage_w.items() if w > 0), key=lambda x: -x.weight)[
        : s.qa_top_k * 2
    ]
    reset = reset_vector(g, phrase_w, passage_w)
    scores = personalized_pagerank(g.adjacency, reset, s.damping)
    doc = scores[len(g.phrases) :]
    order = np.argsort(doc)[::-1].tolist()  # the authors' order (ties: the later passage first)
    if s.rank_fusion:
        order = fuse_ranks(order, np.argsort(dense)[::-1].tolist(), s.rank_fusion)
    head = np.argsort(dense)[::-1][: s.dense_first].tolist() if s.dense_first else []
    first = set(head)
    order = (head + [j for j in order if j not in first])[: s.retrieval_top_k]
    tr.ranked = _passages(g.passages, order, doc, dense, first)
    _record_ppr(idx, tr, scores, reset)


def fuse_ranks(first: list[int], second: list[int], k: int) -> list[int]:
    """Reciprocal-rank fusion of two orders of the same items: each item scored 1/(k + its rank in
    `first`) + 1/(k + its rank in `second`) (ranks from 1), best first; ties keep `first`'s order."""
    score = dict.fromkeys(first, 0.0)
    for order in (first, second):
        for rank, j in enumerate(order, 1):
            score[j] = score.get(j, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda j: -score[j])


def _passages(passages: list[str], order: list[int], score, dense, first: Collection[int] = ()) -> list[RankedPassage]:
    """`first`: the passages placed ahead of the PageRank order (`dense_first`)."""
    return [RankedPassage(passages[j], "", float(score[j]), float(dense[j]), j in first) for j in order]


def _name_chunks(tr: HippoRAG2Trace, corpus: CorpusView) -> None:
    """Title and position of every chunk the trace mentions (the best passages shown, seeds, PPR
    nodes, facts' sources), so every step names a passage by its title, with or without the corpus."""
    ids = [p.chunk_id for p in tr.ranked[:RANKED_NAMED]]
    ids += [x.node for x in tr.seeds if x.kind == "passage"] + [n.node for n in tr.ppr_top if n.kind == "passage"]
    ids += [c for f in tr.facts_retrieved + tr.facts_kept for c in f.chunk_ids]
    found = {c.chunk_id: c for c in corpus.get_chunks(list(dict.fromkeys(ids)))}
    tr.chunks = {cid: ChunkRef(c.title, c.position) for cid, c in found.items()}
    for p in tr.ranked:
        if p.chunk_id in found:
            p.title = found[p.chunk_id].title


def _record_ppr(idx: HippoIndex, tr: HippoRAG2Trace, scores: np.ndarray, reset: np.ndarray) -> None:
    g = idx.graph
    n_ph = len(g.phrases)
    top = np.argsort(scores)[::-1][:PPR_SHOWN].tolist()
    name = [*g.phrases, *(passage_key(c) for c in g.passages)]
    tr.ppr_top = [
        PPRNode(
            name[i][6:] if i >= n_ph else name[i],
            "passage" if i >= n_ph else "phrase",
            float(scores[i]),
            float(reset[i]),
        )
        for i in top
    ]
    shown = {name[i]: node.node for i, node in zip(top, tr.ppr_top)}
    predicates = idx.predicates()
    seen: set[tuple[str, str]] = set()
    for (a, b), w in g.stats.items():
        if a in shown and b in shown and a != b and (b, a) not in seen:
            seen.add((a, b))
            both = w + g.stats.get((b, a), 0.0)
            kind = g.kinds.get((a, b), "fact")
            tr.ppr_edges.append(PPREdge(shown[a], shown[b], both, kind, _edge_label(kind, a, b, predicates)))


def _edge_label(kind: str, a: str, b: str, predicates: dict[tuple[str, str], list[str]]) -> str:
    """A fact edge's predicate, read in the edge's direction (a fact stated either way joins the pair)."""
    if kind != "fact":
        return ""
    found = predicates.get((a, b), []) + predicates.get((b, a), [])
    return found[0] + (f" +{len(found) - 1}" if len(found) > 1 else "") if found else ""
