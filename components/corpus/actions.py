"""The Corpora page's write actions: create, add, delete, extract, import, drop.

Each draws its widgets, makes the engine call with a progress bar, and reports in plain words.
All of them are disabled in the read-only demo.
"""

from __future__ import annotations

import streamlit as st

from components.shell import state
from components.shell.progress import ProgressBar
from components.shell.safe import engine_errors


def _max_mb() -> int:
    """The browser refuses bigger files before sending them; the engine checks again on read."""
    return max(1, int(round(state.settings().max_file_mb)))


def _uploads(files) -> list[tuple[str, bytes]]:
    return [(f.name, f.getvalue()) for f in (files or [])]


def _show_ingest_errors(errors: list[tuple[str, str]]) -> None:
    for _, msg in errors[:20]:
        st.warning(msg)
    if len(errors) > 20:
        st.warning(f"... and {len(errors) - 20} more problems")


#: The uploaders name kinds of file, not a dozen extensions (Streamlit would list every one of
#: them in capitals under the drop zone); the engine refuses any other type with a message that
#: names the file and the supported extensions (engine.ingest.load_uploads).
UPLOAD_LABEL = "Text, Markdown, HTML, PDF, or a dataset file (HotpotQA, MuSiQue, 2Wiki, corpus JSON)"


def _upload_help() -> str:
    from engine.ingest import SUPPORTED_EXTENSIONS

    return "Accepted: " + ", ".join("." + e for e in SUPPORTED_EXTENSIONS) + ". Other files are refused with a reason."


UPLOAD_HELP = _upload_help()


def create_corpus() -> None:
    demo = state.is_demo()
    with st.form("create_corpus", clear_on_submit=False):
        name = st.text_input(
            "Name",
            placeholder="my-corpus",
            disabled=demo,
            key="create_name",
            help="1-64 letters, digits, '-', '_' or '.'",
        )
        mode = st.radio(
            "Chunking",
            ["paragraph", "sentence"],
            horizontal=True,
            disabled=demo,
            help="paragraph: windows of whole sentences (default); sentence: one chunk per "
            "sentence with its title (KG2RAG's HotpotQA setup)",
        )
        files = st.file_uploader(
            UPLOAD_LABEL + " with its questions",
            help=UPLOAD_HELP,
            accept_multiple_files=True,
            disabled=demo,
            key="create_files",
            max_upload_size=_max_mb(),
        )
        limit = st.number_input(
            "Keep only the first N questions of a dataset file (0 = all)", min_value=0, value=0, step=10, disabled=demo
        )
        go = st.form_submit_button("Create corpus", type="primary", disabled=demo, key="create_go")
    if not go or demo:
        return
    if not name.strip():
        st.error("Give the corpus a name.")
        return
    if not files:
        st.error("Add at least one file.")
        return
    with engine_errors("Creating the corpus"):
        from engine.core.chunking import ChunkingSettings
        from engine.ingest import load_uploads

        batch = load_uploads(_uploads(files), state.settings().max_file_bytes, int(limit) or None)
        _show_ingest_errors(batch.errors)
        if not batch.documents:
            st.error("No document could be read from those files; nothing was created.")
            return
        from engine.store import CorpusSettings

        bar = ProgressBar("Chunking and embedding")
        # built aside and renamed into place: a failed or killed create leaves no corpus behind
        _, report, nq = state.workspace().create_from(
            name.strip(), batch.documents, batch.questions, CorpusSettings(ChunkingSettings(mode=mode)), on_progress=bar
        )
        bar.done()
        state.forget_corpus()
        state.select_corpus(name.strip())
        state.flash(
            "success",
            f"Created {name.strip()}: {report.documents_added} documents, {report.chunks_added} "
            f"chunks, {nq} questions.",
        )
        st.session_state["just_created"] = name.strip()  # extract_after_create offers the next step
        st.rerun()


def extract_after_create() -> None:
    """Right where creation ends: the next step as a button (the Extraction tab is the 6th tab)."""
    ss = st.session_state
    name = ss.get("just_created")
    if not name or name != ss.get("corpus") or state.is_demo():
        return
    from engine.store.pending import count_pending

    corpus = state.current_corpus()
    pending = count_pending(corpus) if corpus is not None else 0
    if not pending:
        ss["just_created"] = None
        return
    with st.container(border=True):
        st.markdown(
            f"**Next: extract the triplets of {name}.** The methods retrieve over triplets, so its "
            f"{pending} chunks cannot be used until then (reasoner **{state.model_label()}**; the "
            "Extraction tab shows the cost estimate first)."
        )
        if st.button("⚡ Extract triplets now", type="primary", key="create_extract"):
            ss["just_created"] = None
            _run_extraction(corpus)


def add_documents(corpus) -> None:
    demo = state.is_demo()
    files = st.file_uploader(
        "Add documents: " + UPLOAD_LABEL,
        help=UPLOAD_HELP,
        accept_multiple_files=True,
        key="add_docs_files",
        disabled=demo,
        max_upload_size=_max_mb(),
    )
    if st.button("Add to this corpus", key="add_docs_go", disabled=demo or not files):
        with engine_errors("Adding documents"):
            from engine.ingest import load_uploads

            batch = load_uploads(_uploads(files), state.settings().max_file_bytes)
            _show_ingest_errors(batch.errors)
            bar = ProgressBar("Chunking and embedding")
            report = corpus.add_documents(batch.documents, on_progress=bar)
            nq = corpus.add_questions(batch.questions)
            bar.done()
            st.success(
                f"Added {report.documents_added} documents ({report.documents_skipped} already present), "
                f"{report.chunks_added} chunks, {nq} questions. New chunks wait for extraction."
            )


def delete_documents(corpus, docs: list) -> None:
    demo = state.is_demo()
    by_id = {d.doc_id: d for d in docs}
    chosen = st.multiselect(
        "Documents to delete",
        list(by_id),
        key="del_docs",
        format_func=lambda i: f"{by_id[i].title} ({by_id[i].n_chunks} chunks)",
        disabled=demo,
    )
    if st.button("Delete selected documents", key="del_docs_go", disabled=demo or not chosen):
        with engine_errors("Deleting documents"):
            for doc_id in chosen:
                corpus.delete_document(doc_id)
            state.clear_results()
            state.flash("success", f"Deleted {len(chosen)} documents with their chunks and triplet sources.")
            st.rerun()


def index_summary(corpus) -> str:
    """Which index each vector search uses and what it finds (docs/scaling.md): "chunks exact ·
    propositions HNSW, recall@10 0.982 vs exact on real text". Read from the row counts, with the
    figure measured for that kind, so the page loads no index; `corpus show` measures the corpus's
    own index instead."""
    parts = []
    for which, (kind, recall) in corpus.index_kinds(self_check=False).items():
        if kind == "flat":
            parts.append(f"{which} exact")
        elif recall is None:
            parts.append(f"{which} {kind}")
        else:
            parts.append(f"{which} {kind.upper()}, recall@10 {recall:.3f} vs exact on real text")
    return " · ".join(parts)


def extraction(corpus) -> None:
    """The cost estimate first, then the run with a live progress bar."""
    from engine.store.pending import count_pending, iter_pending
    from engine.triplets.extraction import estimate_extraction

    demo = state.is_demo()
    pending = count_pending(corpus)  # a count, and the estimate reads the chunks in pages: bounded memory
    c = corpus.counts()
    st.caption(
        f"{c.extracted} chunks extracted, {c.pending} pending, {c.failed} failed · reasoner **{state.model_label()}**"
    )
    if not pending:
        st.success("Every chunk has its triplets.")
        return
    with engine_errors("Estimating the extraction cost"):
        est = estimate_extraction(iter_pending(corpus), state.session().model)
        cost = "unknown" if est.cost is None else f"${est.cost:.4f}"
        cols = st.columns(4)
        cols[0].metric("Chunks to extract", est.chunks)
        cols[1].metric("LLM calls", est.calls)
        cols[2].metric("Tokens (est.)", f"{est.prompt_tokens + est.completion_tokens:,}")
        cols[3].metric("Cost (est.)", cost)
        st.caption(
            f"Estimate for {est.model} ({est.style}, tokens by {est.token_counter})"
            + (f" · {est.note}" if est.note else "")
        )
    if st.button(f"Run extraction on {pending} chunks", type="primary", key="extract_go", disabled=demo):
        _run_extraction(corpus)


def _run_extraction(corpus) -> None:
    """Extract every pending chunk with a live progress bar, then report in plain words."""
    from engine.triplets.extraction import run_extraction

    with engine_errors("Extraction"):
        reasoner = state.make_reasoner(corpus)
        bar = ProgressBar("Extracting triplets")
        summary = run_extraction(corpus, reasoner, on_progress=bar, call_deadline=state.settings().call_deadline)
        bar.done("Indexing propositions")
        corpus.refresh_indexes(ProgressBar("Indexing the propositions and HippoRAG 2's graph:"))
        bar.done("Done")
        cost = "unknown" if summary.cost is None else f"${summary.cost:.4f}"
        msg = (
            f"{summary.chunks_done} chunks extracted, {summary.chunks_failed} failed, {summary.triplets} "
            f"triplets, {summary.calls} LLM calls ({summary.cache_hits} cached), {cost}, "
            f"{summary.seconds:.1f}s"
        )
        if summary.stopped:
            st.error(f"Extraction stopped: {summary.stopped}")
        for cid, err in summary.failures[:5]:
            st.warning(f"{cid}: {err}")
        state.flash("success" if summary.ok else "warning", msg)
        st.rerun()


def import_triplets(corpus) -> None:
    demo = state.is_demo()
    st.caption(
        "HippoRAG / T2RAG OpenIE JSON, KG2RAG per-title JSON, or CSV / JSONL with subject, predicate, "
        "object and a chunk_id / title / passage column. Imported chunks count as extracted."
    )
    up = st.file_uploader(
        "Triplet file",
        type=["json", "jsonl", "csv", "tsv"],
        key="import_trip_file",
        disabled=demo,
        max_upload_size=_max_mb(),
    )
    if st.button("Import triplets", key="import_trip_go", disabled=demo or up is None):
        with engine_errors("Importing triplets"):
            from engine.triplets.files import read_triplet_bytes
            from engine.triplets.resolve import resolve_rows

            tf = read_triplet_bytes(up.name, up.getvalue(), state.settings().max_file_bytes)
            if tf.error:
                st.error(tf.error)
                return
            rows, unresolved = resolve_rows(tf.rows, corpus.chunks())
            bar = ProgressBar("Importing and indexing")
            added = corpus.import_triplets(rows, on_progress=bar)
            bar.done()
            st.success(
                f"Imported {added} triplet links ({tf.format}); {unresolved} rows named no chunk of this "
                f"corpus; {tf.skipped} malformed records skipped."
            )
            for e in tf.errors[:5]:
                st.caption(f"skipped: {e}")


def drop_corpus(corpus) -> None:
    demo = state.is_demo()
    confirm = st.text_input(
        f"Type the corpus name ({corpus.name}) to delete it with all its files", key="drop_confirm", disabled=demo
    )
    if st.button("Delete this corpus", key="drop_go", disabled=demo or confirm != corpus.name):
        with engine_errors("Deleting the corpus"):
            name = corpus.name
            state.forget_corpus()
            state.workspace().drop(name)
            state.forget_corpus()
            st.session_state["corpus"] = None
            state.clear_results()
            state.flash("success", f"Deleted corpus {name}. Bring it back from 'Recently deleted corpora'.")
            st.rerun()


def sample_build_progress() -> bool:
    """While the sample corpora build in the background (`make run` starts that and the app at
    once): a progress bar that follows the build; the page reloads when a corpus lands or the
    build ends. False when no build is running (a failed one is reported)."""
    from engine.session.samples import LOG_FILE, build_status

    root = state.settings().workspace
    status = build_status(root)
    if not status.running:
        if status.error and state.SAMPLE_CORPUS not in state.corpus_names():
            st.warning(
                f"Building the sample corpora failed: {status.error} (log: {root / LOG_FILE}). Build them again below."
            )
        return False
    _follow_sample_build(tuple(state.corpus_names()))
    return True


@st.fragment(run_every=1.0)
def _follow_sample_build(known: tuple[str, ...]) -> None:
    from engine.session.samples import build_status

    status = build_status(state.settings().workspace)
    if not status.running or tuple(state.corpus_names()) != known:
        st.rerun(scope="app")  # the sidebar and this page pick the new corpus up
    of = f" ({status.position} of {status.count})" if status.count > 1 else ""
    step = f": {status.label}" + (f" {status.done}/{status.total}" if status.total else "") if status.label else ""
    st.progress(status.fraction, text=f"Building the sample corpus **{status.name}**{of} in the background{step}")
    st.caption(
        "Offline, no key needed; about a minute. This page opens it when it is ready; you can create "
        "your own corpus above meanwhile."
    )


def build_samples() -> None:
    """Build the bundled sample corpora (offline, no key) when they are missing."""
    if st.button("Build the sample corpora (offline, about a minute)", disabled=state.is_demo(), key="samples_go"):
        with engine_errors("Building the sample corpora"):
            from engine.session.samples import ensure_sample_corpora

            bar = ProgressBar("Building samples")
            lines = list(ensure_sample_corpora(state.workspace(), on_progress=bar))
            bar.done()
            state.forget_corpus()
            st.session_state["corpus"] = None
            state.init_state()
            state.flash("success", "; ".join(lines))
            st.rerun()
