"""One question everywhere, and the view in the URL.

The user looks at one question at a time: the corpus, the question (a corpus question's id, or
typed text), Compare's methods and each method's settings are the session's, not a page's. Every
question box is filled from them when its page opens (Streamlit forgets a widget's value when its
page is left), a page shows its result only when it is for that question (Ask and KG2RAG take their
method's result from a comparison of the same question), and presentation mode presents the run of
the page it was entered from.

The address bar names the view, so a reload or a copied link opens it again:

    /compare?corpus=hotpotqa-sample&q=<qid>&methods=t2rag,kg2rag,hipporag2,bm25&step=2
        &settings=kg2rag:paper|t2rag:tuned;k=8
    /present?corpus=...&q=<qid>&methods=kg2rag&present=1&from=kg2rag&step=3

A session reads it once (`restore`); every run writes it back (`write_url`). A linked question
runs once on arrival (Compare, Ask, KG2RAG; presentation mode re-runs the run it presents).
Everything in a link is untrusted: unknown methods, fields and values are dropped, each named in
one message.
"""

from __future__ import annotations

import streamlit as st

from components.shell.state import current_corpus, flash, is_demo, session, url_pages

#: Compare's method picker widget; the session's list is `methods`
METHODS_WIDGET = "cmp_methods"


# --- the session's question and methods ---------------------------------------------------------


def current() -> tuple[str, str]:
    """(qid, text): the question the user is looking at; ("", "") when none was chosen yet."""
    qid, text = st.session_state.get("cur_q") or ("", "")
    return str(qid), str(text)


def set_current(qid: str = "", text: str = "") -> None:
    st.session_state["cur_q"] = (qid, "" if qid else " ".join(text.split()))


def compare_methods() -> list[str]:
    """The methods Compare runs: the session's choice, else T2RAG and KG2RAG."""
    from engine.methods.registry import COMPARED

    chosen = [m for m in st.session_state.get("methods") or [] if m in compare_options()]
    return chosen or list(COMPARED)


def compare_options() -> list[str]:
    """What Compare offers: the compared methods, the baselines, then any plug-in method."""
    from engine.methods.registry import COMPARED, app_methods

    return list(COMPARED) + app_methods(baselines=True) + [m for m in app_methods(baselines=False) if m not in COMPARED]


def _valid_methods(names: list[str]) -> tuple[list[str], list[str]]:
    offered = compare_options()
    good = list(dict.fromkeys(m for m in names if m in offered))
    return good, [m for m in names if m and m not in offered]


# --- a page's question box and result -----------------------------------------------------------


def seed_picker(page: str) -> None:
    """Before a question page draws: its question box shows the session's question. Only when the
    box is new on this page view (its widgets were dropped when the page was left); on the page's
    own reruns the widgets keep what the user did."""
    if page not in url_pages():
        return
    ss = st.session_state
    prefix = url_pages()[page][0]
    if page == "compare" and METHODS_WIDGET not in ss:
        ss[METHODS_WIDGET] = compare_methods()
    if f"{prefix}_mode" in ss:
        return
    qid, text = current()
    if not qid and not text:  # nothing chosen yet: the page's own result, else its first question
        run = ss.get(url_pages()[page][1])
        qid, text = (run.qid, "" if run.qid else run.question) if run is not None else ("", "")
    _into_picker(prefix, qid, text)


def _corpus_qids() -> set[str]:
    """The selected corpus's question ids (none when it is missing or does not open: the page
    says why)."""
    try:
        corpus = current_corpus() if st.session_state.get("corpus") else None
        return {q.qid for q in corpus.questions()} if corpus is not None else set()
    except Exception:  # noqa: BLE001 - a damaged corpus: the page reports it, the link keeps no question id
        return set()


def _into_picker(prefix: str, qid: str, text: str) -> bool:
    from engine.core.limits import MAX_QUESTION_CHARS

    ss = st.session_state
    if qid and qid in _corpus_qids():
        ss[f"{prefix}_mode"], ss[f"{prefix}_qid"] = "Pick a corpus question", qid
        return True
    text = " ".join(text.split())[:MAX_QUESTION_CHARS]
    if text:
        ss[f"{prefix}_mode"], ss[f"{prefix}_text"] = "Type a question", text
        return True
    return False


def note_question(asked, methods: list[str] | None = None) -> None:
    """After a page drew its question box: what it names is the session's question (and, on
    Compare, its methods are the session's methods)."""
    q = getattr(asked, "q", None)
    if q is not None:
        set_current(q.qid)
    elif asked.question and (asked.submitted or not current()[0]):
        set_current("", asked.question)  # typed text counts once it was submitted
    if methods is not None:
        st.session_state["methods"] = list(methods)


def _same_question(run, qid: str, text: str) -> bool:
    if run is None:
        return False
    if qid or run.qid:
        return run.qid == qid
    return " ".join(run.question.split()) == text


def page_run(page: str):
    """The run a question page shows: its own when it is for the session's question, else (Ask,
    KG2RAG) its method's result from a comparison of that question, else None."""
    from engine.runs import Run

    ss = st.session_state
    _, result_key, step_key = url_pages()[page]
    qid, text = current()
    own = ss.get(result_key)
    if not qid and not text:
        return own
    if _same_question(own, qid, text):
        return own
    if page == "compare":
        return None
    from engine.methods.registry import method_on_page

    method = method_on_page(page).name
    cmp = ss.get("compare")
    result = cmp.by_method(method) if cmp is not None and _same_question(cmp, qid, text) else None
    if cmp is None or result is None:
        return None
    adopted = Run(cmp.question, [result], gold=list(cmp.gold), qid=cmp.qid, corpus=cmp.corpus, created=cmp.created)
    ss[result_key], ss[step_key] = adopted, 0
    return adopted


def rerun_current(methods: list[str]):
    """The session's question run again through `methods` (a reloaded presentation), or None."""
    from components.shell.runner import run_methods
    from components.shell.state import require_corpus

    corpus = require_corpus()
    qid, text = current()
    q = next((q for q in corpus.questions() if q.qid == qid), None) if qid else None
    question = q.question if q is not None else text
    return run_methods(list(methods), corpus, question, q) if question and methods else None


def show_question(prefix: str, qid: str, text: str) -> None:
    """A run opened from a file: its question becomes the session's and fills the page's box (call
    before the box is drawn)."""
    set_current(qid, text)
    _into_picker(prefix, qid, text)


def present_run_of(page: str):
    """The run presentation mode presents when entered from `page`: that page's run (Ask, KG2RAG,
    Compare), elsewhere the comparison of the session's question."""
    if page in url_pages():
        return page_run(page)
    return page_run("compare")


# --- the link -----------------------------------------------------------------------------------


def _int(text: str) -> int:
    return int(text) if text.isdigit() and len(text) < 4 else 0


def restore() -> None:
    """Once per session, before the page is chosen: the link's question, methods, settings, step
    and presentation mode into the session. A question page then runs the linked question once
    (`arm_autorun`)."""
    ss = st.session_state
    if ss["url_restored"]:
        return
    ss["url_restored"] = True
    qp = st.query_params
    qid, text = qp.get("q", ""), qp.get("question", "")
    if qid and qid in _corpus_qids():
        set_current(qid)
    elif text.strip():
        from engine.core.limits import MAX_QUESTION_CHARS

        set_current("", " ".join(text.split())[:MAX_QUESTION_CHARS])
    problems: list[str] = []
    methods, unknown = _valid_methods(qp.get("methods", "").split(","))
    presenting = qp.get("present") == "1"
    back = qp.get("from", "")
    if presenting:  # the presented run's methods (one, from a method's own page); Compare's own stay
        ss["present_methods"] = methods
    if methods and (not presenting or back == "compare"):
        ss["methods"] = methods
    if unknown:
        problems.append(f"unknown methods {', '.join(repr(m[:40]) for m in unknown[:5])} left out")
    if qp.get("settings") and not is_demo():  # a demo's settings are the operator's
        from components.shell.link_settings import apply_settings_param

        problems += apply_settings_param(session(), qp.get("settings", ""))
    ss["url_step"] = _int(qp.get("step", "0"))
    ss["url_autorun"] = "armed" if any(current()) and not presenting else ""  # presentation runs its own
    if presenting:
        ss["present"], ss["present_step"] = True, ss["url_step"]
        ss["present_from"] = back if back in url_pages() or back in ("corpora", "evaluate", "settings") else "compare"
        ss["present_autorun"] = bool(any(current()))
    if problems:
        flash("warning", "The link was opened without: " + "; ".join(problems) + ".")


def arm_autorun(page: str) -> None:
    """Right after `restore`, once the page is known: a linked question runs on that page (Compare
    as the landing card's question; Ask and KG2RAG through `take_url_autorun`)."""
    ss = st.session_state
    if ss.get("url_autorun") != "armed":
        return
    ss["url_autorun"] = ""
    if page not in url_pages():
        return
    if page == "compare":
        ss["cmp_autorun"] = True
    else:
        ss["url_autorun"] = page


def take_url_autorun(page: str) -> bool:
    """True once, on the page a link named a question for: run it, so the link shows its result."""
    ss = st.session_state
    if ss.get("url_autorun") != page:
        return False
    ss["url_autorun"] = ""
    return True


def open_url_step(step_key: str) -> None:
    """After a linked question ran: open the step the link named (the stepper clamps it)."""
    ss = st.session_state
    ss[step_key], ss["url_step"] = ss.get("url_step", 0) or 0, 0


def _question_params(run, qid: str, text: str) -> dict[str, str]:
    if run is not None:
        return {"q": run.qid} if run.qid else {"question": run.question[:500]}
    return {"q": qid} if qid else {"question": text[:500]} if text else {}


def view_params(page: str) -> dict[str, str]:
    """The query parameters naming what is on screen: the corpus, the session's question, methods
    and settings; on a question page the shown result's question, methods and step; in
    presentation mode the presented run, its step and the page it was entered from."""
    from components.shell.link_settings import settings_param

    ss = st.session_state
    qid, text = current()
    out = {"corpus": ss.get("corpus") or ""}
    methods = compare_methods()
    step = 0
    if ss.get("present"):
        run = ss.get("present_run")
        out.update(_question_params(run, qid, text))
        if run is not None:
            methods = [r.method for r in run.results]
        out.update(present="1", **{"from": ss.get("present_from") or "compare"})
        step = int(ss.get("present_step") or 0)
    elif page in url_pages():
        run = page_run(page)
        out.update(_question_params(run, qid, text))
        if run is not None:
            methods = [r.method for r in run.results] if page == "compare" else methods
            step = int(ss.get(url_pages()[page][2]) or 0)
    else:
        out.update(_question_params(None, qid, text))
    from engine.methods.registry import COMPARED

    if methods != list(COMPARED) or page == "compare" or ss.get("present"):
        out["methods"] = ",".join(methods)
    out["settings"] = settings_param(session())
    if step:
        out["step"] = str(step)
    return {k: v for k, v in out.items() if v}


def write_url(page: str) -> None:
    """Name the view in the address bar (only when it changed: each write is a message to the
    browser)."""
    want = view_params(page)
    have = {k: st.query_params.get(k, "") for k in st.query_params.keys()}
    if have != want:
        st.query_params.from_dict(want)
