"""Corpora: pick or create a corpus; browse documents, chunks, triplets, questions and the graph;
extract triplets (cost estimate first); add, delete, import."""

import streamlit as st

from components.chunk_names import chunk_name
from components.corpus import actions
from components.corpus import backup_actions as backups
from components.graphs.entity_graph import ENTITY_LEGEND, entity_subgraph, name_edge_sources
from components.graphs.graph import DEFAULT_NODE_CAP, show_graph
from components.shell import state
from components.shell.landing import landing_card
from components.shell.safe import engine_errors
from components.widgets.tables import chunks_frame, documents_frame, questions_frame, searchable_table, triplets_frame
from engine.store.graph_view import entity_view

state.ensure_app()

landing_card()  # the product, the methods, and a showcase that runs in one click
st.header("📚 Corpora")
names = state.corpus_names()

with st.expander("➕ Create a corpus from files", expanded=not names):
    actions.create_corpus()
actions.extract_after_create()
building = actions.sample_build_progress()
if state.SAMPLE_CORPUS not in names and not building:
    with st.expander("Sample corpora", expanded=not names):
        st.caption("HotpotQA and MuSiQue samples bundled with the app (CC BY-SA 4.0 / CC BY 4.0).")
        actions.build_samples()

backups.recently_deleted(names)

corpus = state.require_corpus("Pick a corpus in the sidebar, or create one above.")

c = corpus.counts()
st.subheader(f"Corpus: {corpus.name}")
with st.container(key="counts"):  # keyed: components.shell.theme keeps this row compact on a phone
    cols = st.columns(6)
    for col, (label, value) in zip(
        cols,
        [
            ("Documents", c.documents),
            ("Chunks", c.chunks),
            ("Triplets", c.triplets),
            ("Questions", c.questions),
            ("Extracted", c.extracted),
            ("Pending", c.pending),
        ],
    ):
        col.metric(label, value)
st.caption(
    f"Chunking: {corpus.settings.chunking.mode} · embedder: {corpus.settings.embedder} · "
    f"vector search: {actions.index_summary(corpus)}"
)

# a keyed tab set keeps the open tab across reruns (e.g. after an action reports success)
tabs = st.tabs(
    ["Documents", "Chunks", "Triplets", "Questions", "Graph", "Extraction", "Manage"],
    key="corpus_tab",
    on_change="ignore",
)
with tabs[0], engine_errors("Listing documents"):
    docs = corpus.documents()
    searchable_table(documents_frame(docs), key="docs", search_cols=["title", "source", "doc_id"], label="documents")
with tabs[1], engine_errors("Listing chunks"):
    searchable_table(
        chunks_frame(corpus.chunks(), corpus.extraction_statuses()),
        key="chunks",
        search_cols=["chunk", "text", "chunk_id"],
        label="chunks",
    )
with tabs[2], engine_errors("Listing triplets"):
    all_chunks = {c.chunk_id: chunk_name(c.title, c.position) for c in corpus.chunks()}
    searchable_table(
        triplets_frame(corpus.triplets(), all_chunks),
        key="triplets",
        search_cols=["subject", "predicate", "object"],
        label="triplets",
    )
with tabs[3], engine_errors("Listing questions"):
    searchable_table(
        questions_frame(corpus.questions()),
        key="questions",
        search_cols=["question", "answer", "qid"],
        label="questions",
    )
with tabs[4], engine_errors("Drawing the graph"):
    g1, g2 = st.columns([3, 1])
    search = g1.text_input("Find entities", key="graph_search", placeholder="e.g. Arthur's Magazine")
    cap = g2.number_input("Node cap", min_value=10, max_value=400, value=DEFAULT_NODE_CAP, step=10, key="graph_cap")
    view = entity_view(corpus, search, int(cap))  # at most `cap` entities, never the whole graph
    nodes, edges, _ = entity_subgraph(view.graph, search, int(cap))
    matched = view.matched
    show_graph(
        nodes,
        name_edge_sources(edges, corpus),
        height=560,
        legend=ENTITY_LEGEND,
        caption=f"Showing {len(nodes)} entities (cap {int(cap)} nodes) and {len(edges)} triplet edges; "
        + (
            f"{matched} entities match “{search}” (orange), plus their neighbours."
            if search.strip()
            else f"the best-connected entities of {matched}, with their neighbours."
        )
        + f" Not shown: {view.left_out_entities:,} entities, {view.left_out_edges:,} triplet edges.",
    )
with tabs[5]:
    actions.extraction(corpus)
with tabs[6]:
    st.markdown("**Add documents**")
    actions.add_documents(corpus)
    st.divider()
    st.markdown("**Delete documents**")
    actions.delete_documents(corpus, corpus.documents())
    st.divider()
    st.markdown("**Import triplets**")
    actions.import_triplets(corpus)
    st.divider()
    st.markdown("**Backups** (restore one as a new corpus, or replace this one)")
    backups.backups(corpus)
    st.divider()
    st.markdown("**Integrity**")
    backups.check_and_repair(corpus)
    st.divider()
    st.markdown("**Delete the corpus** (it can be brought back from *Recently deleted corpora*)")
    actions.drop_corpus(corpus)
