"""Evaluation results: the per-method table, charts, per-question drill-down and downloads."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components.compare.verdict import method_color
from components.compare.view import _PLOTLY
from components.widgets.preset_badge import show_eval_presets
from engine.methods.registry import title


def _t(m: str) -> str:
    return title(m)


def pick_questions(corpus, scope: str, n: int):
    """None (all), the first n, or n question ids drawn at random with a fixed seed (repeatable)."""
    if scope == "All":
        return None
    if scope == "Random N":
        import random

        qids = [q.qid for q in corpus.questions()]
        return random.Random(0).sample(qids, min(n, len(qids)))
    return n


QUALITY_COLORS = {"EM": "#3b6ea8", "F1": "#2a9d8f", "retrieval recall": "#9bbad9"}


def summary_frame(summary) -> pd.DataFrame:
    """Quality per method (the first table): answers and retrieval."""
    rows = []
    for m in summary.methods:
        a = m.answer
        rows.append(
            {
                "method": _t(m.method),
                "done": f"{m.n_done}/{m.n_questions}",
                "EM": a.em,
                "F1": a.f1,
                f"retrieval recall ({m.retrieval_unit})": a.retrieval_recall,
                f"recall@{m.k}": a.recall_at_k,
                "retrieval F1": a.retrieval_f1,
                "chunks/q": a.avg_evidence_chunks,
                "errors": m.n_errors,
            }
        )
    return pd.DataFrame(rows)


def cost_frame(summary) -> pd.DataFrame:
    """Cost per method (the second table, so neither is cut off on a laptop screen)."""
    return pd.DataFrame(
        [
            {
                "method": _t(m.method),
                "LLM calls/q": m.calls_per_q,
                "tokens/q": m.prompt_tokens_per_q + m.completion_tokens_per_q,
                "$ total": m.cost_total,
                "$ per q": m.cost_per_q,
                "engine s/q": m.engine_time_per_q,
                "LLM s/q": m.llm_time_per_q,
            }
            for m in summary.methods
        ]
    )


def _fmt(df: pd.DataFrame) -> dict:
    return {
        c: st.column_config.NumberColumn(format="%.3f")
        for c in df.columns
        if df[c].dtype.kind == "f" and not c.startswith("$")
    }


def _any(values) -> bool:
    return any(v for v in values if v is not None)


def charts(summary) -> list[tuple[str, go.Figure]]:
    """(key, figure) for each chart that has data: no chart with an empty axis."""
    names = [_t(m.method) for m in summary.methods]
    ms = summary.methods
    out = []
    fig = go.Figure()
    series = [
        ("EM", [m.answer.em for m in ms]),
        ("F1", [m.answer.f1 for m in ms]),
        ("retrieval recall", [m.answer.retrieval_recall for m in ms]),
    ]
    for label, ys in series:
        if label == "EM" or _any(ys):
            fig.add_bar(name=label, x=names, y=[y or 0.0 for y in ys], marker_color=QUALITY_COLORS[label])
    fig.update_layout(
        barmode="group",
        title="Answer and retrieval quality",
        height=300,
        yaxis_range=[0, 1],
        margin=dict(l=10, r=10, t=40, b=10),
        legend=dict(orientation="h", y=-0.15),
    )
    out.append(("eval_quality", fig))
    times = [(m.engine_time_per_q or 0.0, m.llm_time_per_q or 0.0) for m in ms]
    if _any(e + w for e, w in times):
        f = go.Figure(
            [
                go.Bar(name="engine", x=names, y=[e for e, _ in times], marker_color="#8fb3d9"),
                go.Bar(name="LLM", x=names, y=[w for _, w in times], marker_color="#e9a23b"),
            ]
        )
        f.update_layout(
            barmode="stack",
            title="Seconds per question",
            height=300,
            yaxis_rangemode="tozero",
            yaxis_title="seconds",
            margin=dict(l=10, r=10, t=40, b=10),
            legend=dict(orientation="h", y=-0.15),
        )
        out.append(("eval_time", f))
    if _any(m.calls_per_q for m in ms):
        f = go.Figure(
            go.Bar(
                x=names,
                y=[m.calls_per_q for m in ms],
                marker_color=[method_color(m.method, i) for i, m in enumerate(ms)],
            )
        )
        f.update_layout(
            title="LLM calls per question",
            height=300,
            yaxis_rangemode="tozero",
            yaxis_title="calls",
            margin=dict(l=10, r=10, t=40, b=10),
        )
        out.append(("eval_calls", f))
    if _any(m.cost_per_q for m in ms):
        f = go.Figure(
            go.Bar(
                x=names,
                y=[m.cost_per_q or 0.0 for m in ms],
                marker_color=[method_color(m.method, i) for i, m in enumerate(ms)],
                text=["unknown" if m.cost_per_q is None else f"{m.cost_per_q:.5f}" for m in ms],
            )
        )
        f.update_layout(
            title="Dollars per question", height=300, yaxis_rangemode="tozero", margin=dict(l=10, r=10, t=40, b=10)
        )
        out.append(("eval_cost", f))
    return out


def _leader(rows: list[tuple[str, float]], n: int, what: tuple[str, str, str], fmt: str = ".2f") -> str:
    """'T2RAG answered best (F1 0.63 vs KG2RAG 0.55)', or a tie when the lead is less than one
    question's worth (1/n): one question answered otherwise would change who leads."""
    if len(rows) < 2 or n <= 0:
        return ""
    rows = sorted(rows, key=lambda r: -r[1])
    (top, a), b = rows[0], rows[1][1]
    others = " vs ".join(f"{m} {v:{fmt}}" for m, v in rows[1:])
    if a - b < 1.0 / n:
        tied = [(m, v) for m, v in rows if a - v < 1.0 / n]
        names = ", ".join(m for m, _ in tied[:-1]) + f" and {tied[-1][0]}"
        values = " vs ".join(f"{v:{fmt}}" for _, v in tied)
        return f"{names} {what[1]} about as well ({what[0]} {values}: less than one question apart)"
    return f"{top} {what[2]} ({what[0]} {a:{fmt}} vs {others})"


def best_line(summary) -> str:
    """One line on who did best, computed from the summary: answers by F1, then gold paragraphs
    found by retrieval recall; a lead under one question's worth is called a tie."""
    ms = [m for m in summary.methods if m.n_done]
    n = summary.n_questions
    if len(ms) < 2 or not n:
        return ""
    parts = [_leader([(_t(m.method), m.answer.f1) for m in ms], n, ("F1", "answered", "answered best"))]
    recall = [(_t(m.method), m.answer.retrieval_recall) for m in ms if m.answer.retrieval_recall is not None]
    parts.append(_leader(recall, n, ("recall", "retrieved", "found the most gold evidence")))
    said = "; ".join(p for p in parts if p)
    return f"Over {n} question{'s' if n != 1 else ''}: {said}." if said else ""


def show_summary(summary) -> None:
    if summary.stopped:
        st.error(f"The evaluation stopped early: {summary.stopped}")
    line = best_line(summary)
    if line:
        st.markdown(f"**{line}**")
    st.caption(
        f"Corpus {summary.corpus} · reasoner {summary.reasoner} · {summary.n_questions} questions · "
        "averages over all questions (an error counts 0); $ shows None when a price is unknown"
    )
    show_eval_presets(summary)
    if getattr(summary, "inputs", None):  # what each method was fed, beside its paper's (older summaries: none)
        from engine.eval.report import inputs_line

        for method, inputs in summary.inputs.items():
            st.caption(f"{method} · {inputs_line(method, inputs)}")
    df = summary_frame(summary)
    st.dataframe(df, hide_index=True, width="stretch", column_config=_fmt(df))
    cf = cost_frame(summary)
    st.dataframe(cf, hide_index=True, width="stretch", column_config=_fmt(cf))
    figs = charts(summary)
    for i in range(0, len(figs), 2):
        cols = st.columns(2)
        for col, (key, fig) in zip(cols, figs[i : i + 2]):
            col.plotly_chart(fig, key=key, config=_PLOTLY)
    if not _any(m.calls_per_q for m in summary.methods):
        st.caption("No LLM calls (offline reasoner): no calls or dollars to chart.")


def records(summary) -> dict[str, dict]:
    from engine.eval.harness import read_records

    out = Path(summary.out_dir)
    return {m.method: read_records(out / f"{m.method}.jsonl") for m in summary.methods}


def questions_frame(recs: dict[str, dict]) -> pd.DataFrame:
    rows: dict[str, dict] = {}
    for method, by_q in recs.items():
        for qid, r in by_q.items():
            row = rows.setdefault(qid, {"qid": qid, "question": r.question, "gold": " / ".join(r.gold)})
            row[f"{_t(method)} answer"] = r.answer
            row[f"{_t(method)} F1"] = round(r.metrics.f1, 3)
            para = r.metrics.paragraph
            row[f"{_t(method)} recall"] = None if para is None else round(para.recall, 3)
            if r.error:
                row[f"{_t(method)} error"] = r.error
    return pd.DataFrame(list(rows.values()))


def downloads(summary, per_question: pd.DataFrame) -> None:
    out = Path(summary.out_dir)
    c1, c2, c3 = st.columns(3)
    csv_path, json_path = out / "summary.csv", out / "summary.json"
    if csv_path.exists():
        c1.download_button(
            "⬇ Summary CSV",
            csv_path.read_bytes(),
            file_name="evaluation-summary.csv",
            mime="text/csv",
            key="eval_dl_csv",
            on_click="ignore",
        )
    if json_path.exists():
        c2.download_button(
            "⬇ Summary JSON",
            json_path.read_bytes(),
            file_name="evaluation-summary.json",
            mime="application/json",
            key="eval_dl_json",
            on_click="ignore",
        )
    c3.download_button(
        "⬇ Per-question CSV",
        per_question.to_csv(index=False).encode("utf-8"),
        file_name="evaluation-questions.csv",
        mime="text/csv",
        key="eval_dl_q",
        on_click="ignore",
    )


def load_trace(summary, rec):
    from engine.methods.base import load_result

    if not rec.trace:
        return None
    path = (Path(summary.out_dir) / rec.trace).resolve()
    if Path(summary.out_dir).resolve() not in path.parents or not path.is_file():
        return None
    return load_result(path)


def describe_evaluation(folder: Path) -> str:
    """A saved evaluation as a reader knows it: "2026-12-06 00:41 · T2RAG, KG2RAG · 5 questions"
    (the folder's name when its summary cannot be read)."""
    import time

    try:
        s = load_summary(folder)
    except (OSError, ValueError, TypeError, KeyError):
        return folder.name
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.created)) if s.created else folder.name
    methods = ", ".join(_t(m.method) for m in s.methods)
    return f"{when} · {methods} · {s.n_questions} question{'s' if s.n_questions != 1 else ''} · {s.reasoner}"


def saved_evaluations(runs_dir: Path) -> list[Path]:
    if not runs_dir.is_dir():
        return []
    return sorted((p for p in runs_dir.glob("eval-*") if (p / "summary.json").is_file()), reverse=True)


def load_summary(folder: Path):
    from engine.core import serde
    from engine.eval.report import EvalSummary

    s = serde.loads(EvalSummary, (folder / "summary.json").read_text(encoding="utf-8"))
    s.out_dir = str(folder)  # the folder may have moved with the workspace
    return s


def summary_json(summary) -> str:
    from engine.core import serde

    return json.dumps(serde.to_dict(summary), indent=1)
