"""LightRAG (Guo et al. 2024, "LightRAG: Simple and Fast Retrieval-Augmented Generation"), run by
its own library (`lightrag-hku`, HKUDS/LightRAG) over the corpus's chunks and triplets:

1. storage: the corpus's chunks and triplets inserted as LightRAG's custom knowledge graph (kg.py,
   storage.py), built once per corpus state and kept in the corpus folder;
2. keywords: LightRAG's keyword-extraction prompt, through the reasoner, splits the question into
   high-level keywords (themes, matched against relations) and low-level ones (names, matched
   against entities). The offline reasoner writes no free text: its question rules give the
   keywords instead (entities low-level, relations high-level), handed to LightRAG through the
   query's `hl_keywords` / `ll_keywords`, a departure the trace and the screen name;
3. retrieval: the library's `kg_query` in the chosen mode (local, global, hybrid, mix) returns the
   entities, relations and chunks it put in the context, and the context itself;
4. answer: the short-answer step every method uses reads that context (the default), or
   LightRAG's own `rag_response` prompt writes it (`answer_step="lightrag"`, a model only). The
   offline reasoner's rules read sentences, not LightRAG's JSON tables: offline, the answer step
   reads the retrieved chunks as it does for every baseline (a named departure).

Every model call, LightRAG's own included, goes through the reasoner: tokens, cost, cache, the
question's deadline and the key rules hold, and each call is an `LLMCall` in the trace.

    result = LightRAG(reasoner).answer("Who is the daughter of ...?", corpus, LightRAGSettings(mode="hybrid"))
"""

from __future__ import annotations

import time
from typing import Any

from engine.llm.base import LLMCall, LLMError
from engine.methods.base import MethodDefaults, Result, StepCallback, Usage, register_trace
from engine.methods.common import answer_step, format_context
from engine.methods.departure import Departure
from engine.methods.lightrag import runner
from engine.methods.lightrag.library import import_lightrag
from engine.methods.lightrag.storage import Store, open_store
from engine.methods.lightrag.trace import (
    KEYWORDS_LLM,
    KEYWORDS_QUESTION,
    KEYWORDS_RULES,
    Entity,
    LightRAGSettings,
    LightRAGTrace,
    Relation,
    RetrievedChunk,
)
from engine.methods.presets import describe
from engine.reasoners.base import Reasoner, is_placeholder
from engine.store.protocol import CorpusView

register_trace("lightrag", LightRAGTrace)

#: What the trace says (and the screen shows) when the rules found the keywords.
KEYWORDS_OFFLINE = (
    "keywords from the offline reasoner's question rules (entities as low-level, relations as high-level "
    "keywords), given to LightRAG through the query's keyword fields: LightRAG asks its LLM for them"
)
#: ... when they found none either.
KEYWORDS_FALLBACK = "the rules found no keyword: the whole question is the low-level keyword"

#: The engine's departures from LightRAG, the same for any settings (the trace lists them).
ENGINE_DEPARTURES = [
    Departure(
        "triplets as stored",
        "the corpus's stored triplets inserted as a custom knowledge graph: entities typed UNKNOWN, described by "
        "their facts ('subject predicate object', at most 8), relations keyed by their predicates; every stating "
        "chunk listed as the source; the corpus's embedder",
        "an LLM extracts typed entities and relations with written descriptions and keywords from every chunk at "
        "indexing, and summarizes long descriptions; OpenAI embeddings",
        "one corpus, one embedder and one set of triplets for every method, so they differ by method alone",
        "engine",
    ),
    Departure(
        "tokenizer",
        "tiktoken cl100k_base, from the copy litellm ships",
        "tiktoken o200k_base, downloaded on first use",
        "no network at run time; token budgets count a few percent differently",
        "engine",
    ),
    Departure(
        "no reranker",
        "chunks kept in LightRAG's merge order (enable_rerank off)",
        "reranked when a rerank model is configured (none is by default)",
        "the comparison uses no reranker for any method unless one is configured",
        "engine",
    ),
]
ANSWER_DEPARTURE = Departure(
    "answer prompt",
    "the zero-shot short-answer prompt every method uses, reading LightRAG's context",
    "LightRAG's rag_response prompt, response type 'Multiple Paragraphs'",
    "answers differ by retrieval alone (set answer_step=lightrag for LightRAG's own prompt)",
    "engine",
)
OFFLINE_CONTEXT_DEPARTURE = Departure(
    "offline answer context",
    "the offline reasoner's answer step reads the retrieved chunks, titled, as it does for every baseline",
    "the LLM reads LightRAG's whole context: entity and relation tables, then the chunks",
    "the offline rules read sentences, not LightRAG's JSON tables",
    "engine",
)
KEYWORD_DEPARTURE = Departure(
    "keywords from rules",
    "the offline reasoner's question rules: entities low-level, relations high-level",
    "LightRAG's keyword-extraction prompt to the LLM",
    "the offline reasoner writes no free text",
    "engine",
)


def departures(s: LightRAGSettings, offline: bool) -> list[Departure]:
    """The engine's departures from LightRAG for this run (beside any setting's)."""
    out = list(ENGINE_DEPARTURES)
    if s.answer_step == "shared" or offline:
        out.append(ANSWER_DEPARTURE)
    if offline:
        out += [KEYWORD_DEPARTURE, OFFLINE_CONTEXT_DEPARTURE]
    return out


class LightRAG(MethodDefaults):
    name = "lightrag"
    settings_cls = LightRAGSettings
    trace_cls = LightRAGTrace
    whatif_knobs = {"top_k": (1, 100), "chunk_top_k": (1, 40)}

    def __init__(self, reasoner: Reasoner, reranker: Any = None):
        self.reasoner = reasoner

    def answer(
        self,
        question: str,
        corpus: CorpusView,
        settings: LightRAGSettings | None = None,
        on_step: StepCallback | None = None,
    ) -> Result:
        s = settings or LightRAGSettings()
        step = on_step or (lambda label, payload: None)
        t0 = time.perf_counter()
        tr = LightRAGTrace(question=question, settings=s)
        offline = not getattr(self.reasoner, "supports_free_text", False)
        tr.preset, tr.departures = describe(self.name, s)
        tr.departures += departures(s, offline)
        store, tr.storage_note = open_store(corpus, _progress(step))
        tr.storage = dict(store.counts)
        tr.timings["storage"] = time.perf_counter() - t0
        if offline:
            self._rule_keywords(question, tr)
        t1 = time.perf_counter()
        error = self._retrieve(question, corpus, store, s, tr, offline)
        tr.timings["retrieve"] = time.perf_counter() - t1
        step(f"keywords: {len(tr.high_level)} high-level, {len(tr.low_level)} low-level", tr)
        step(f"entities: {len(tr.entities)}, relations: {len(tr.relations)}", tr)
        step(f"chunks: {len(tr.chunks)}", tr)
        if not error:
            error = self._answer(question, store, s, tr, offline, corpus)
        tr.timings["total"] = total = time.perf_counter() - t0
        step("answer", tr)
        return Result(
            method=self.name,
            question=question,
            answer=tr.answer,
            usage=Usage.from_calls(tr.calls(), total),
            evidence_chunk_ids=tr.chunk_ids(),
            stop_reason="llm error" if error else ("no context" if tr.no_context else "answered"),
            error=error,
            reasoner=getattr(self.reasoner, "name", ""),
            trace=tr,
        )

    def _retrieve(
        self, question: str, corpus: Any, store: Store, s: LightRAGSettings, tr: LightRAGTrace, offline: bool
    ) -> str:
        """The library's query: keywords (the LLM's, unless the rules gave them), then entities,
        relations and chunks into the trace. Returns the error that ends the question, or ""."""
        hooks = runner.Hooks(embed=corpus.embed, chat=None if offline else self.reasoner.chat)
        error = ""
        try:
            result = runner.run(hooks, lambda: _query(store, question, s, tr, generate=False))
        except LLMError as exc:
            result, error = None, f"LightRAG's keyword step failed: {exc}"
        finally:
            if not offline:
                tr.keyword_call = next((c for c in hooks.calls if c.job == "keywords"), None)
                tr.other_calls += [c for c in hooks.calls if c is not tr.keyword_call]
        failed = tr.keyword_call if tr.keyword_call is not None and tr.keyword_call.error else None
        if not error and not offline and failed is not None and not failed.response:
            # LightRAG itself stops when its model fails; its fallback keywords would hide that
            error = f"LightRAG's keyword step failed: {failed.error}"
        if result is not None:
            _read(store, result, tr)
        elif not error:
            tr.keywords_from = tr.keywords_from or KEYWORDS_LLM
            tr.no_context = "LightRAG built no context: no keyword, or nothing matched them"
        return error

    def _rule_keywords(self, question: str, tr: LightRAGTrace) -> None:
        """The offline reasoner's query triplets as LightRAG's keywords: the named parts (no
        placeholders) low-level, the relations high-level."""
        decompose = getattr(self.reasoner, "decompose", None)
        triplets: list = []
        if callable(decompose):
            triplets, tr.keyword_call = decompose(question)
        for t in triplets:
            for part in (t.subject, t.object):
                if part.strip() and not is_placeholder(part) and part.strip() not in tr.low_level:
                    tr.low_level.append(part.strip())
            if t.predicate.strip() and not is_placeholder(t.predicate) and t.predicate.strip() not in tr.high_level:
                tr.high_level.append(t.predicate.strip())
        tr.keywords_from = KEYWORDS_RULES
        if not tr.low_level and not tr.high_level:
            tr.low_level = [question]
            tr.keywords_from = KEYWORDS_QUESTION

    def _answer(
        self, question: str, store: Store, s: LightRAGSettings, tr: LightRAGTrace, offline: bool, corpus: Any
    ) -> str:
        t = time.perf_counter()
        error = ""
        if s.answer_step == "lightrag" and not offline and not tr.no_context:
            hooks = runner.Hooks(embed=corpus.embed, chat=self.reasoner.chat)
            try:
                result = runner.run(hooks, lambda: _query(store, question, s, tr, generate=True))
                tr.answer = (getattr(result, "content", "") or "").strip() if result is not None else ""
            except LLMError as exc:
                error = str(exc)
            tr.call = next((c for c in hooks.calls if c.job == "answer"), None)
            tr.other_calls += [c for c in hooks.calls if c is not tr.call]
            if tr.call is not None:
                tr.context = next((m["content"] for m in tr.call.messages if m.get("role") == "system"), "")
            if error and tr.call is None:
                tr.call = LLMCall(job="answer", model=getattr(self.reasoner, "name", ""), error=error)
        else:
            if offline:
                ids = tr.chunk_ids()
                tr.context = format_context(corpus.get_chunks(ids)) if ids else ""
            tr.answer, tr.call, error = answer_step(self.reasoner, question, tr.context)
        if not error and tr.call is not None and tr.call.error and not tr.answer:
            error = f"the answer step failed: {tr.call.error}"
        tr.timings["generate"] = time.perf_counter() - t
        return error

    @staticmethod
    def summarize(result: Result) -> list[str]:
        tr: LightRAGTrace | None = result.trace
        lines = []
        if tr is not None:
            lines.append(
                f"storage: {tr.storage.get('entities', 0)} entities, {tr.storage.get('relations', 0)} relations, "
                f"{tr.storage.get('chunks', 0)} chunks ({tr.storage_note})"
            )
            how = (
                "from LightRAG's prompt to the LLM"
                if tr.keywords_from == KEYWORDS_LLM
                else "from the offline rules, a departure: LightRAG asks its LLM"
            )
            lines.append(f"keywords {how}; high-level {tr.high_level}, low-level {tr.low_level}")
            lines.append(
                f"mode {tr.settings.mode}: {len(tr.entities)} entities, {len(tr.relations)} relations, "
                f"{len(tr.chunks)} chunks" + (f" ({tr.no_context})" if tr.no_context else "")
            )
        lines.append(f"answer: {result.answer}")
        return lines


def _progress(step: StepCallback):
    """A build's progress as steps: its start, every tenth of the texts embedded, its end."""
    shown: set[int] = set()

    def report(done: int, total: int, label: str) -> None:
        tenth = 10 * done // total if total else 10
        if tenth not in shown:
            shown.add(tenth)
            step(f"{label}: {done}/{total} texts embedded", None)

    return report


async def _query(store: Store, question: str, s: LightRAGSettings, tr: LightRAGTrace, generate: bool) -> Any:
    """The library's `kg_query`, as `LightRAG.aquery_data` (and, with `generate`, `aquery_llm`) call
    it, keeping both the structured result and the context text. Keywords given (the rules', or the
    ones the LLM found in the first pass) are passed through the query's keyword fields."""
    lib = import_lightrag()
    rag = store.rag
    param = lib["base"].QueryParam(
        mode=s.mode,
        only_need_context=not generate,
        response_type=s.response_type,
        top_k=s.top_k,
        chunk_top_k=s.chunk_top_k,
        max_entity_tokens=s.max_entity_tokens,
        max_relation_tokens=s.max_relation_tokens,
        max_total_tokens=s.max_total_tokens,
        hl_keywords=list(tr.high_level),
        ll_keywords=list(tr.low_level),
        enable_rerank=False,
        disable_user_prompt_prefix=True,
    )
    result = await lib["operate"].kg_query(
        question,
        rag.chunk_entity_relation_graph,
        rag.entities_vdb,
        rag.relationships_vdb,
        rag.text_chunks,
        param,
        rag._build_global_config(),
        hashing_kv=rag.llm_response_cache,
        system_prompt=None,
        chunks_vdb=rag.chunks_vdb,
    )
    return result


def _read(store: Store, result: Any, tr: LightRAGTrace) -> None:
    """The structured result (`raw_data`) into the trace, LightRAG's chunk ids mapped to ours."""
    sep = import_lightrag()["constants"].GRAPH_FIELD_SEP
    raw = getattr(result, "raw_data", None) or {}
    data = raw.get("data") or {}
    meta = raw.get("metadata") or {}
    words = meta.get("keywords") or {}
    if not tr.keywords_from:
        tr.keywords_from = KEYWORDS_LLM
        tr.high_level = [str(x) for x in words.get("high_level") or []]
        tr.low_level = [str(x) for x in words.get("low_level") or []]
    info = meta.get("processing_info") or {}
    tr.found = {str(k): int(v) for k, v in info.items() if isinstance(v, int)}

    def ours(source_id: Any) -> list[str]:
        out: list[str] = []
        for lr in str(source_id or "").split(sep):
            out += [c for c in store.chunk_ids(lr.strip()) if c not in out]
        return out

    tr.entities = [
        Entity(str(e.get("entity_name", "")), str(e.get("entity_type", "")), str(e.get("description", "")),
               ours(e.get("source_id")))
        for e in data.get("entities") or []
    ]  # fmt: skip
    tr.relations = [
        Relation(
            str(r.get("src_id", "")),
            str(r.get("tgt_id", "")),
            str(r.get("keywords", "")),
            str(r.get("description", "")),
            float(r.get("weight") or 0.0),
            ours(r.get("source_id")),
        )
        for r in data.get("relationships") or []
    ]
    for c in data.get("chunks") or []:
        lr = str(c.get("chunk_id", ""))
        for cid in store.chunk_ids(lr):
            tr.chunks.append(RetrievedChunk(cid, str(c.get("file_path", "")), lr))
    if not getattr(result, "llm_generated", False):
        tr.context = str(getattr(result, "content", "") or "")
    if not tr.chunks and not tr.entities and not tr.relations:
        tr.no_context = "LightRAG found nothing above its similarity threshold for these keywords"
