"""Backups, restore, integrity check and repair, and bringing back a deleted corpus (Corpora page).

The same engine calls as `python -m engine corpus backup|snapshots|restore|undo-drop|check`. All
of them change the workspace, so all are off in the read-only demo (checking stays possible).
"""

from __future__ import annotations

import time

import streamlit as st

from components.shell import state
from components.shell.safe import engine_errors


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def backups(corpus) -> None:
    from engine.integrity.backup import list_snapshots, restore, snapshot_before

    demo = state.is_demo()
    ws = state.workspace()
    if st.button("Back up now", key="backup_go", disabled=demo):
        with engine_errors("The backup"):
            info = snapshot_before(ws, corpus, "manual")
            st.success(f"Backed up to {info.path.name} ({len(info.files)} files, checksummed).")
    snaps = list_snapshots(ws, corpus.name)
    if not snaps:
        st.caption("No snapshot of this corpus yet. One is taken automatically before a document is deleted.")
        return
    st.dataframe(
        [{"snapshot": s.id, "taken": _when(s.created_at), "why": s.reason, **s.counts} for s in snaps],
        hide_index=True,
        use_container_width=True,
    )
    by_id = {s.id: s for s in snaps}
    pick = st.selectbox(
        "Snapshot",
        list(by_id),
        key="restore_pick",
        format_func=lambda i: f"{_when(by_id[i].created_at)} · {by_id[i].reason}",
    )
    chosen = next(s for s in snaps if s.id == pick)
    c1, c2 = st.columns(2)
    new_name = c1.text_input(
        "Restore as a new corpus named", value=f"{corpus.name}-restored", key="restore_as", disabled=demo
    )
    if c1.button("Restore as new", key="restore_new", disabled=demo):
        with engine_errors("Restoring"):
            restored = restore(ws, chosen, new_name)
            state.forget_corpus()
            state.flash("success", f"Restored {chosen.id} as corpus {restored.name}.")
            st.rerun()
    confirm = c2.text_input(
        f"Type {corpus.name} to replace it (it is snapshotted first)", key="restore_confirm", disabled=demo
    )
    if c2.button("Replace this corpus", key="restore_replace", disabled=demo or confirm != corpus.name):
        with engine_errors("Restoring"):
            state.forget_corpus()
            restore(ws, chosen, corpus.name, force=True)
            state.forget_corpus()
            state.clear_results()
            state.flash("success", f"Corpus {corpus.name} replaced by snapshot {chosen.id}.")
            st.rerun()


def check_and_repair(corpus) -> None:
    from engine.integrity import inspect, repair
    from engine.integrity.interrupted import finish_index_writes

    if st.button("Check integrity", key="check_go"):
        with engine_errors("The check"):
            # as `corpus check` does: what a writer killed after its commit left behind is finished first
            for done in finish_index_writes(state.workspace(), corpus.name):
                st.caption(f"recovered: {done}")
            findings = inspect(corpus.path)
            if not findings:
                st.success("Database and index files: ok.")
            for f in findings:
                st.warning(str(f))
            st.session_state["check_findings"] = len(findings)
    if st.session_state.get("check_findings") and st.button("Repair", key="repair_go", disabled=state.is_demo()):
        with engine_errors("The repair"):
            state.forget_corpus()
            report = repair(state.workspace(), corpus.name)
            state.forget_corpus()
            st.session_state["check_findings"] = len(report.remaining)
            for line in report.actions:
                st.caption(f"repaired: {line}")
            for line in report.lost:
                st.warning(f"lost: {line}")
            if report.recovered_into:
                st.info(f"Recovered into corpus {report.recovered_into}; the damaged one is unchanged.")


def recently_deleted(names: list[str]) -> None:
    """Deleted corpora that can be brought back (drop keeps them as snapshots)."""
    from engine.integrity.backup import list_snapshots, undo_drop

    dropped = [s for s in list_snapshots(state.workspace()) if s.reason == "drop" and s.corpus not in names]
    if not dropped:
        return
    with st.expander(f"🗑️ Recently deleted corpora ({len(dropped)})"):
        for s in dropped:
            c1, c2 = st.columns([3, 1])
            c1.caption(
                f"**{s.corpus}**, deleted {_when(s.created_at)}: {s.counts.get('documents', '?')} docs, "
                f"{s.counts.get('chunks', '?')} chunks, {s.counts.get('triplets', '?')} triplets"
            )
            if c2.button("Bring back", key=f"undrop_{s.id}", disabled=state.is_demo()):
                with engine_errors("Bringing the corpus back"):
                    undo_drop(state.workspace(), s.corpus)
                    state.forget_corpus()
                    state.select_corpus(s.corpus)
                    state.flash("success", f"Corpus {s.corpus} is back.")
                    st.rerun()
