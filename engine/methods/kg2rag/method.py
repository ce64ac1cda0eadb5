"""KG2RAG (NAACL 2025): seed chunks, expand them over the entity graph, organize the expansion
into maximum spanning trees, rank the trees and answer from the best ones (SPEC.md section 2).

The graph algorithms live in `graph.py` (trees ranked in `rank.py`, selected in `select.py`) and work
on plain graphs; this module wires them to a corpus, a reranker and a reasoner, and records every
step in a `KG2RAGTrace` (`trace.py`).

    result = KG2RAG(reasoner).answer("Who directed ...?", corpus, KG2RAGSettings(k=10))
"""

from __future__ import annotations

import sys
import time

import numpy as np

from engine.core.textnorm import normalize_entity
from engine.embed.rerank import Reranker, is_cosine
from engine.methods.base import MethodDefaults, Result, StepCallback, Usage, register_trace
from engine.methods.baselines import bm25_index, rrf
from engine.methods.common import answer_step, cached_reranker, format_context
from engine.methods.inputs import PaperInputs
from engine.methods.kg2rag import departures
from engine.methods.kg2rag.authors import authors_expansion, candidate_edges, chunk_text, question_links, text_chunk_ids
from engine.methods.kg2rag.context import FILL_SEPARATOR, TREE_SEPARATOR, tree_context  # noqa: F401 - re-exported
from engine.methods.kg2rag.graph import Tree, expand, spanning_trees, weighted_edges
from engine.methods.kg2rag.rank import cosine_rank
from engine.methods.kg2rag.select import fill_from_seeds, fill_reranked, guard_seeds, keep_top_seeds, select_trees
from engine.methods.kg2rag.trace import KG2RAGSettings, KG2RAGTrace, SeedChunk
from engine.methods.presets import describe, prompted
from engine.reasoners.base import Reasoner
from engine.store.protocol import CorpusView


def _neighbourhood(corpus: CorpusView, seed_trips, hops: int, per_entity: int = -1):
    """The part of the entity graph the walk can reach: read by indexed lookups from a store that
    offers it (cost follows the question, not the corpus; at most `per_entity` edges of each entity,
    its first by triplet id, when >= 0), else the whole graph."""
    if not hasattr(corpus, "entity_neighbourhood"):
        return corpus.entity_graph()

    entities = sorted({normalize_entity(x) for t in seed_trips for x in (t.subject, t.object)} - {""})
    # at least one hop: the seeds' own triplets are edges incident to the seed entities, and the
    # trees organize them even when the walk takes no hop (hops=0 read an empty graph before)
    # the seeds' own triplets are read whatever the cap (storage order must not cut them)
    keep = [int(t.triplet_id) for t in seed_trips if t.triplet_id is not None]
    return corpus.entity_neighbourhood(entities, max(hops, 1), per_entity, keep)


register_trace("kg2rag", KG2RAGTrace)

#: The ranker note when no cross-encoder is configured: the paper ranks trees with one (SPEC step 6).
NO_CROSS_ENCODER = "ranked by cosine: no cross-encoder configured"


class KG2RAG(MethodDefaults):
    name = "kg2rag"
    settings_cls = KG2RAGSettings
    trace_cls = KG2RAGTrace
    whatif_knobs = {"k": (1, 30), "hops": (0, 3)}
    preset_reasons = departures.REASONS
    preset_fixes = departures.FIXES
    run_departures = departures.RUN_DEPARTURES
    paper_inputs = PaperInputs(
        embedder=("mxbai-embed-large",),
        triplets=("llama3:8b",),
        reranker=("bge-reranker-large",),
        reasoner=("llama3:8b",),
        source="nju-websoft/KG2RAG code/kg_rag_distractor.py (--embed_model_name, --model_name, --reranker; "
        "triplets by code/preprocess/hotpot_extraction.py)",
    )

    def __init__(self, reasoner: Reasoner, reranker: Reranker | None = None):
        self.reasoner = reasoner
        self.reranker = reranker  # overrides settings.reranker when given
        self._rerankers: dict[str, Reranker] = {}

    # -- the method --------------------------------------------------------------------------

    def answer(
        self,
        question: str,
        corpus: CorpusView,
        settings: KG2RAGSettings | None = None,
        on_step: StepCallback | None = None,
    ) -> Result:
        s = settings or KG2RAGSettings()
        step = on_step or (lambda label, payload: None)
        t_start = time.perf_counter()
        tr = KG2RAGTrace(question=question, settings=s)
        tr.preset, tr.departures = describe(self.name, s)
        clock = _Clock(tr.timings)
        # one question embedding, reused for every similarity below
        qvec = np.asarray(corpus.embed([question]), dtype=np.float32)[0]
        hits, seed_trips = self._seed(question, qvec, corpus, s, tr)  # 1
        clock.lap("seed")
        step(f"seed: {len(tr.seeds)} chunks", tr)
        seed_scores = {cid: float(sc) for cid, sc in hits}
        chunk_scores = dict(seed_scores)
        trees = (
            self._expand_and_organize(question, corpus, qvec, s, tr, seed_scores, seed_trips, chunk_scores, clock, step)
            if seed_trips
            else []
        )  # 2-5
        self._rank_trees(question, qvec, corpus, s, tr, trees, chunk_scores, seed_scores, clock)  # 6
        if not seed_trips:
            tr.note = (
                "the seed chunks hold no triplets (not extracted yet, or nothing found): "
                "no graph to expand, so the answer uses the seed chunks only"
            )
        evidence = self._select(question, qvec, corpus, s, tr, hits, chunk_scores)  # 7
        clock.lap("select")
        step(f"select: {len(tr.selected_tree_ids)} trees, {len(evidence)} chunks", tr)
        error = self._generate(question, corpus, tr, s)  # 8
        clock.lap("generate")
        total = time.perf_counter() - t_start
        tr.timings["total"] = total
        step("answer", tr)
        return Result(
            method=self.name,
            question=question,
            answer=tr.answer,
            usage=Usage.from_calls([tr.call] if tr.call else [], total),
            evidence_chunk_ids=evidence,
            stop_reason="answered" if not error else "llm error",
            error=error,
            reasoner=getattr(self.reasoner, "name", ""),
            trace=tr,
        )

    # 6. rank the trees (and, with `seed_trees`, a one-chunk tree per seed without triplets)
    def _rank_trees(
        self,
        question: str,
        qvec: np.ndarray,
        corpus: CorpusView,
        s: KG2RAGSettings,
        tr: KG2RAGTrace,
        trees: list[Tree],
        chunk_scores: dict[str, float],
        seed_scores: dict[str, float],
        clock: _Clock,
    ) -> None:
        if s.seed_trees:
            alone = [x for x in tr.seeds if not x.n_triplets]
            trees += [_seed_tree(len(trees) + i, x.chunk_id) for i, x in enumerate(alone)]
        if trees:
            tr.ranker = self._rank(question, qvec, trees, corpus, s, chunk_scores, seed_scores)
            tr.trees = sorted(
                trees, key=lambda t: (-(t.rank_score if t.rank_score is not None else -np.inf), t.tree_id)
            )
            clock.lap("rank")

    # 1. seed
    def _seed(self, question: str, qvec: np.ndarray, corpus: CorpusView, s: KG2RAGSettings, tr: KG2RAGTrace):
        """The seed chunks (best first, with their similarity) and the triplets they state."""
        hits, fused = self._seeds(question, qvec, corpus, s)
        seed_ids = [cid for cid, _ in hits]
        seed_chunks = {c.chunk_id: c for c in corpus.get_chunks(seed_ids)}
        seed_trips = corpus.triplets(chunk_ids=seed_ids) if seed_ids else []
        per_chunk: dict[str, list[int]] = {cid: [] for cid in seed_ids}
        for t in seed_trips:
            for cid in t.chunk_ids:
                if cid in per_chunk:
                    per_chunk[cid].append(int(t.triplet_id or 0))  # stored triplets always have an id
        tr.seeds = [
            SeedChunk(
                cid,
                getattr(seed_chunks.get(cid), "title", ""),
                float(sc),
                len(per_chunk[cid]),
                sorted(per_chunk[cid]),
                fused_score=fused.get(cid),
            )
            for cid, sc in hits
        ]
        return hits, seed_trips

    # 2-5. expand over the entity graph; weighted graph, one maximum spanning tree per component, walk
    def _expand_and_organize(
        self,
        question: str,
        corpus: CorpusView,
        qvec: np.ndarray,
        s: KG2RAGSettings,
        tr: KG2RAGTrace,
        seed_scores: dict[str, float],
        seed_trips,
        chunk_scores: dict[str, float],
        clock: _Clock,
        step: StepCallback,
    ) -> list[Tree]:
        graph = _neighbourhood(corpus, seed_trips, s.hops, s.max_entity_reads)

        def score_chunks(ids: list[str]) -> dict[str, float]:
            vecs = np.asarray(corpus.chunk_vectors(ids), dtype=np.float32)
            return {cid: float(v) for cid, v in zip(ids, vecs @ qvec)}

        exp = expand(
            graph,
            seed_scores,
            {int(t.triplet_id): tuple(t.chunk_ids) for t in seed_trips},
            s.hops,
            score_chunks,
            s.expansion_cap if s.expansion_cap >= 0 else sys.maxsize,  # -1: no cap (0 would add nothing)
            s.max_entity_edges,
        )
        tr.seed_entities, tr.hops = exp.seed_entities, exp.hops
        chunk_scores.update(exp.chunk_scores)
        if s.expansion == "authors":
            authors_expansion(corpus, tr, exp, seed_trips, chunk_scores)
            tr.edges = candidate_edges(corpus, chunk_scores)
        else:
            tr.edges = weighted_edges(graph, exp.triplet_ids, exp.chunk_scores)
        clock.lap("expand")
        step(f"expand: {sum(len(h.chunks_added) for h in exp.hops) + len(tr.completed)} chunks added", tr)
        if s.question_links:
            titles = [c.title for c in corpus.get_chunks(list(chunk_scores)) if c.title]
            tr.edges += question_links(question, tr.edges, titles)
        tr.nodes = sorted({n for e in tr.edges for n in (e.u, e.v)})
        trees = spanning_trees(tr.edges)
        clock.lap("trees")
        step(f"organize: {len(trees)} trees", tr)
        return trees

    # 7. select trees, then fill
    def _select(
        self,
        question: str,
        qvec: np.ndarray,
        corpus: CorpusView,
        s: KG2RAGSettings,
        tr: KG2RAGTrace,
        hits,
        chunk_scores: dict[str, float],
    ) -> list[str]:
        tr.tree_chunk_ids = select_trees(tr.trees, s.k, s.overflow, chunk_scores)
        tr.selected_tree_ids = [t.tree_id for t in tr.trees if t.selected]
        fill_rule = s.fill if s.fill == "rerank" or any(t.kind != "seed" for t in tr.trees) else "room"
        if fill_rule == "rerank":
            # the authors' nodes: the seeds in retrieval order, then the expansion's chunks
            seeds, chosen = [cid for cid, _ in hits], set(tr.tree_chunk_ids)
            seed_set = set(seeds)
            cands = seeds + [c for c in chunk_scores if c not in seed_set]
            rest = [c for c in cands if c not in chosen]
            need = len(tr.tree_chunk_ids) < s.k // 2 and rest
            scores = self._fill_scores(question, qvec, corpus, s, rest) if need else []
            tr.fill_chunk_ids = fill_reranked(tr.tree_chunk_ids, list(zip(rest, scores)), s.k)
        else:
            tr.fill_chunk_ids = fill_from_seeds(tr.tree_chunk_ids, [cid for cid, _ in hits], s.k, fill_rule)
        if tr.fill_chunk_ids and tr.trees:
            why = {"half": f"fewer than k/2 = {s.k / 2:g}", "rerank": f"fewer than k//2 = {s.k // 2}"}
            what = (
                "remaining candidates, ranked against the question"
                if fill_rule == "rerank"
                else "remaining seed chunks"
            )
            tr.note = (
                f"the selected trees gave {len(tr.tree_chunk_ids)} chunks, "
                f"{why.get(fill_rule, f'room under k = {s.k}')}: added the {len(tr.fill_chunk_ids)} best {what}"
            )
        if s.seed_guard:
            tr.tree_chunk_ids, tr.fill_chunk_ids, kept = guard_seeds(
                tr.trees, tr.tree_chunk_ids, tr.fill_chunk_ids, [cid for cid, _ in hits], s.k, chunk_scores
            )
            if kept:
                tr.note = (tr.note + "; " if tr.note else "") + (
                    f"seed guard: {len(kept)} seed chunk(s) more similar to the question than every expanded "
                    "chunk kept their place (after the trees)"
                )
        if s.keep_seeds:
            tr.tree_chunk_ids, tr.fill_chunk_ids, kept = keep_top_seeds(
                tr.trees,
                tr.tree_chunk_ids,
                tr.fill_chunk_ids,
                [cid for cid, _ in hits],
                s.keep_seeds,
                s.k,
                chunk_scores,
            )
            if kept:
                tr.note = (tr.note + "; " if tr.note else "") + (
                    f"keep_seeds: {len(kept)} of the first stage's best {s.keep_seeds} seed chunk(s) kept their "
                    "place (after the trees)"
                )
        return tr.tree_chunk_ids + tr.fill_chunk_ids

    # 8. generate
    def _generate(self, question: str, corpus: CorpusView, tr: KG2RAGTrace, s: KG2RAGSettings) -> str:
        """Answer from the selected trees' context; the error to report, "" when it answered."""
        tr.context = tree_context([t for t in tr.trees if t.selected], tr.fill_chunk_ids, corpus)
        reasoner = prompted(self.reasoner, "kg2rag-paper" if s.answer_prompt == "paper" else "tuned")
        tr.answer, tr.call, error = answer_step(reasoner, question, tr.context)
        return error

    def _seeds(
        self, question: str, qvec: np.ndarray, corpus: CorpusView, s: KG2RAGSettings
    ) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """The top-k seed chunks with their cosine similarity, best first, and (hybrid seeds) the
        fusion score each was ordered by."""
        if s.seeds == "dense":
            return corpus.search_chunks(qvec[None, :], s.k)[0], {}
        n = 2 * s.k  # per list before fusion: deeper lists cost time and did not find more gold
        dense = corpus.search_chunks(qvec[None, :], n)[0]
        sparse = bm25_index(corpus).search(question, n)
        fused = rrf([[c for c, _ in dense], [c for c, _ in sparse]])[: s.k]
        ids = [cid for cid, _ in fused]
        cos = dict(dense)
        missing = [c for c in ids if c not in cos]
        if missing:
            vecs = np.asarray(corpus.chunk_vectors(missing), dtype=np.float32)
            cos.update({c: float(v) for c, v in zip(missing, vecs @ qvec)})
        return [(c, float(cos[c])) for c in ids], {c: float(f) for c, f in fused}

    def _rank(
        self,
        question: str,
        qvec: np.ndarray,
        trees: list[Tree],
        corpus: CorpusView,
        s: KG2RAGSettings,
        chunk_scores: dict[str, float],
        seed_scores: dict[str, float],
    ) -> str:
        """Set each tree's `rank_score`; return a description of the ranker for the trace."""
        reranker = self.reranker or (self._reranker(s.reranker, corpus) if s.reranker else None)
        seeds_alone = [t for t in trees if t.kind == "seed"]
        if reranker is not None and not is_cosine(reranker):
            as_text = s.tree_form == "text"
            ids = [c for t in trees if t.kind == "seed" or as_text for c in text_chunk_ids(t)]
            got = {c.chunk_id: c for c in corpus.get_chunks(list(dict.fromkeys(ids)))}
            texts = [
                format_context([got[t.chunk_ids[0]]]) if t.kind == "seed" and t.chunk_ids[0] in got else ""
                for t in trees
            ]
            if as_text:  # the authors: the tree's chunks' text, concatenated (use_tpt=False)
                texts = [
                    x or " ".join(chunk_text(got[c]) for c in text_chunk_ids(t) if c in got)
                    for t, x in zip(trees, texts)
                ]
            else:
                texts = [x or t.triplet_form for t, x in zip(trees, texts)]
            for t, sc in zip(trees, reranker.score(question, texts)):
                t.rank_score = float(sc)
            how = f"{reranker.name} over each tree's " + (
                "text (its chunks in walk order)" if as_text else "triplet form"
            )
            return how + (" (a seed with no triplet: over its text)" if seeds_alone and not as_text else "")
        how = cosine_rank(trees, qvec, corpus, s.tree_score, chunk_scores, seed_scores)
        if reranker is None:
            how = f"{NO_CROSS_ENCODER}; {how}"
        for t in seeds_alone:  # its text is its only form: its own similarity
            t.rank_score = seed_scores.get(t.chunk_ids[0])
        return how + ("; a seed with no triplet: its own similarity" if seeds_alone else "")

    def _reranker(self, spec: str, corpus: CorpusView) -> Reranker:
        return cached_reranker(self._rerankers, spec, corpus)

    def _fill_scores(
        self, question: str, qvec: np.ndarray, corpus: CorpusView, s: KG2RAGSettings, ids: list[str]
    ) -> list[float]:
        """The `rerank` fill's scores: the cross-encoder on each chunk's text, else its cosine."""
        reranker = self.reranker or (self._reranker(s.reranker, corpus) if s.reranker else None)
        if reranker is not None and not is_cosine(reranker):
            got = {c.chunk_id: c for c in corpus.get_chunks(ids)}
            return [float(x) for x in reranker.score(question, [chunk_text(got[c]) if c in got else "" for c in ids])]
        vecs = np.asarray(corpus.chunk_vectors(ids), dtype=np.float32)
        return [float(x) for x in vecs @ qvec]

    # -- CLI -------------------------------------------------------------------------------

    @staticmethod
    def summarize(result: Result) -> list[str]:
        tr: KG2RAGTrace = result.trace
        if tr is None:
            return [f"answer: {result.answer}"]
        added = sum(len(h.chunks_added) for h in tr.hops)
        cut = sum(len(h.cut_by_total_cap) for h in tr.hops)
        capped = sum(len(c.cut_triplet_ids) for h in tr.hops for c in h.entity_caps)
        lines = [
            f"seeds: {len(tr.seeds)} chunks ({tr.settings.seeds}), {sum(x.n_triplets > 0 for x in tr.seeds)} "
            "with triplets",
            f"expansion: {len(tr.hops)} hop(s), +{added} chunks"
            + (f" ({cut} chunks cut by the cap, {capped} hub triplets not followed)" if cut or capped else "")
            + (f", +{len(tr.completed)} completing {', '.join(tr.completed_titles)}" if tr.completed else ""),
            f"graph: {len(tr.nodes)} entities, {len(tr.edges)} edges, {len(tr.trees)} components/trees"
            + (f" ({links} question links)" if (links := sum(e.is_question_link for e in tr.edges)) else ""),
            f"ranker: {tr.ranker or '-'}",
            f"selected: {len(tr.selected_tree_ids)} trees -> {len(tr.tree_chunk_ids)} chunks"
            + (f" ({cuts} cut to fit k)" if (cuts := sum(1 for t in tr.trees if t.cut_chunk_ids)) else "")
            + (f", +{len(tr.fill_chunk_ids)} seed chunks as fill" if tr.fill_chunk_ids else ""),
            f"tokens: {result.usage.prompt_tokens} prompt + {result.usage.completion_tokens} completion"
            f" in {result.usage.calls} call(s)",
        ]
        if tr.note:
            lines.append(f"note: {tr.note}")
        lines.append(f"answer: {result.answer}")
        return lines


def _seed_tree(tree_id: int, chunk_id: str) -> Tree:
    """A seed chunk with no triplet, as a one-chunk tree competing in the ranking."""
    return Tree(
        tree_id=tree_id, nodes=[], kept_edges=[], pruned_edges=[], chunk_ids=[chunk_id], triplet_form="", kind="seed"
    )


class _Clock:
    def __init__(self, timings: dict[str, float]):
        self.timings = timings
        self.t = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = now - self.t
        self.t = now
