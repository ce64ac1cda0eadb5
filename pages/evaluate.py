"""Evaluate: a method set over the corpus's questions; EM, F1, retrieval recall, cost; drill-down."""

import time

import streamlit as st

from components.eval import view as ev
from components.methods.result_view import show_result
from components.shell import state
from components.shell.progress import ProgressBar
from components.shell.safe import engine_errors
from engine.methods.registry import COMPARED, app_methods, title
from engine.runs import runs_dir

state.ensure_app()

st.title("📊 Evaluate")
ss = st.session_state
corpus = state.require_corpus()
n_q = corpus.counts().questions
if not n_q:
    st.info("This corpus has no questions: add a dataset file (HotpotQA, MuSiQue, 2Wiki) on the Corpora page.")
    st.stop()

methods = st.multiselect(
    "Methods", app_methods(), default=list(COMPARED), key="eval_methods", format_func=lambda m: title(m)
)
c1, c2, c3 = st.columns(3)
scope = c1.radio("Questions", ["First N", "Random N", "All"], horizontal=True, key="eval_scope")
n = c2.number_input("N", min_value=1, max_value=n_q, value=min(5, n_q), key="eval_n", disabled=scope == "All")
workers = c3.number_input(
    "Questions at once",
    min_value=1,
    max_value=16,
    value=1 if not state.session().model else 4,
    key="eval_workers",
    help="Parallel questions; worth it with a remote model",
)
st.caption(
    f"Reasoner: {state.model_label()} · method settings from the Settings page · results and traces are "
    f"written under runs/ of the corpus"
)
if st.button("Run evaluation", type="primary", disabled=not methods or state.is_demo(), key="eval_go"):
    with engine_errors("The evaluation"):
        from engine.eval.harness import run_eval, select_questions

        if state.is_demo():
            from engine.session import ConfigLocked

            raise ConfigLocked("evaluations are off in the read-only demo")
        picked = ev.pick_questions(corpus, scope, int(n))  # None (all), the first n, or ids
        state.session().begin(len(select_questions(corpus, picked)) * len(methods))
        out = runs_dir(corpus) / time.strftime("eval-%Y%m%d-%H%M%S")
        bar = ProgressBar("Evaluating")
        ss["eval_report"] = run_eval(
            corpus,
            list(methods),
            state.make_reasoner(corpus),
            questions=picked,
            out_dir=out,
            settings_by_method={m: state.method_settings(m) for m in methods},
            on_progress=bar,
            concurrency=int(workers),
        )
        bar.done()

saved = ev.saved_evaluations(runs_dir(corpus))
if saved:
    with st.expander(f"📂 Open a saved evaluation ({len(saved)})"):
        pick = st.selectbox(
            "Saved evaluations",
            [p.name for p in saved],
            key="eval_pick",
            format_func=lambda name: ev.describe_evaluation(runs_dir(corpus) / name),
        )
        if st.button("Open", key="eval_open"):
            with engine_errors("Opening the evaluation"):
                ss["eval_report"] = ev.load_summary(runs_dir(corpus) / pick)

summary = ss.get("eval_report")
if summary is not None:
    st.divider()
    with engine_errors("Showing the evaluation"):
        ev.show_summary(summary)
        recs = ev.records(summary)
        per_q = ev.questions_frame(recs)
        st.markdown("**Per question**")
        st.dataframe(per_q.drop(columns=["qid"], errors="ignore"), hide_index=True, width="stretch")  # ids: CSV only
        ev.downloads(summary, per_q)
        if not per_q.empty:
            shown = dict(zip(per_q["qid"], per_q["question"]))
            qid = st.selectbox(
                "Drill down into a question",
                list(per_q["qid"]),
                key="eval_qid",
                format_func=lambda i: shown.get(i, i),
            )
            tabs = st.tabs([title(m) for m in recs], key="eval_tab")
            for tab, (m, by_q) in zip(tabs, recs.items()):
                with tab:
                    rec = by_q.get(qid)
                    if rec is None:
                        st.caption("No record for this question.")
                        continue
                    result = ev.load_trace(summary, rec)
                    if result is None:
                        st.write(f"Answer: {rec.answer}")
                    else:
                        show_result(result, corpus, f"eval_step_{m}")
