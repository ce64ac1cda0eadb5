"""Save, download, export and reopen runs: the controls every result page shares."""

from __future__ import annotations

import streamlit as st

from components.report.export import export_file_name, export_html
from components.shell import state
from components.shell.safe import engine_errors
from engine.runs import Run, describe_run, list_runs, load_run, run_from_json, run_to_json


def save_and_export(run: Run, corpus, key: str) -> None:
    """Save under <corpus>/runs (not in demo mode), download the JSON, download an offline HTML page."""
    c1, c2, c3 = st.columns(3)
    if c1.button(
        "💾 Save run",
        key=f"{key}_save",
        disabled=state.is_demo() or corpus is None,
        help="Saved runs reopen with the full step-through, no LLM needed",
    ):
        with engine_errors("Saving the run"):
            path = state.session().save_run(corpus, run)
            st.success(f"Saved as runs/{path.name}")
    name = export_file_name(run)
    # the files are built when clicked, on Streamlit's download thread: building the offline page
    # on every run cost ~12 ms of each question's ~140 ms at the server, under the interpreter lock
    # every other visitor waits on (issue 30)
    c2.download_button(
        "⬇ Trace (JSON)",
        lambda: run_to_json(run),
        file_name=f"{name}.json",
        mime="application/json",
        key=f"{key}_json",
        on_click="ignore",
    )
    c3.download_button(
        "⬇ Offline HTML",
        lambda: export_html(run, corpus=corpus),
        file_name=f"{name}.html",
        mime="text/html",
        key=f"{key}_html",
        on_click="ignore",
    )


def open_saved(corpus, key: str, methods: tuple[str, ...] | None = None) -> Run | None:
    """A picker over saved runs plus a trace upload; returns the run the user chose to open."""
    with st.expander("📂 Open a saved run (no LLM needed)"):
        runs = list_runs(corpus) if corpus is not None else []
        runs_by_name = {p.name: p for p in runs}
        if runs:
            pick = st.selectbox(
                "Saved runs of this corpus",
                [p.name for p in runs],
                key=f"{key}_pick",
                format_func=lambda name: describe_run(runs_by_name[name]),
            )
            if st.button("Open", key=f"{key}_open"):
                with engine_errors("Opening the run"):
                    run = load_run(runs_by_name[pick])
                    return _check(run, methods)
        else:
            st.caption("No saved runs in this corpus yet.")
        up = st.file_uploader(
            "…or upload a trace / comparison file", type=["json"], key=f"{key}_upload", disabled=state.is_demo()
        )
        if up is not None and st.button("Open uploaded file", key=f"{key}_open_up"):
            with engine_errors("Reading the uploaded trace"):
                run = run_from_json(up.getvalue().decode("utf-8", errors="replace"))
                return _check(run, methods)
    return None


def _check(run: Run, methods: tuple[str, ...] | None) -> Run | None:
    if methods and not any(r.method in methods for r in run.results):
        st.warning(f"That file holds {', '.join(r.method for r in run.results)}, not {' / '.join(methods)}.")
        return None
    return run
