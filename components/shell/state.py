"""Session state and shared resources: the one place the app's state is initialised.

Two kinds of state, kept apart on purpose:

* `st.session_state` holds the user's own values (chosen corpus, the last results and where each
  stepper stands) and `session`, the engine's `Session`: model, endpoint, API key and method
  settings live there, and its setters refuse every change in demo mode (a forged widget value
  included). `init_state()` sets every key once per session; pages never invent new ones.
* `st.cache_resource` holds shared read-only things: the workspace (with its embedder) and each
  opened corpus. They are keyed by the workspace path, so a test that points
  TRIPLET_LENS_WORKSPACE at a temp folder never sees another test's corpus.

The API key typed on the Settings page lives in the session object only: it is handed to the
reasoner for the duration of a run and is never written to disk or put in a trace.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import streamlit as st

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from engine.core.config import AppSettings  # noqa: E402
from engine.methods.registry import app_methods, method_info  # noqa: E402

#: The sample corpus `python -m engine sample ensure` builds; preselected when it exists.
SAMPLE_CORPUS = "hotpotqa-sample"
#: Methods the app offers, by their engine name, with the label shown to the user.
METHOD_LABELS = {name: method_info(name).label for name in app_methods()}  # the built-in methods


def method_labels() -> dict[str, str]:
    """Every method the app offers with its label, plug-ins loaded since start-up included."""
    return {name: method_info(name).label for name in app_methods()}


# key -> default; factories for mutable defaults so sessions never share one dict
_DEFAULTS: dict[str, Any] = {
    "corpus": None,  # name of the selected corpus
    "session": None,  # engine.session.Session: model, endpoint, key, method settings
    # each method page's keys (`page_keys`: `{page}_result`, `{page}_step`, `{page}_whatif`): `init_state`
    "compare": None,  # engine.runs.Run with several results
    "cmp_step_t2rag": 0,  # one stepper per method on the Compare page
    "cmp_step_kg2rag": 0,
    "cmp_sync": 0,  # the one stepper driving both columns of Compare
    "cmp_autorun": False,  # set by the landing card: Compare runs its question once on arrival
    "cmp_whatif": None,  # the last what-if on Compare: {"base": Run, "items": {method: (Result, RunDiff)}}
    "eval_step_t2rag": 0,  # drill-down steppers on the Evaluate page
    "eval_step_kg2rag": 0,
    "present_run": None,  # the Run presentation mode walks
    "eval_report": None,
    "present": False,  # presentation mode: controls hidden
    "present_step": 0,
    "present_from": "",  # the page presentation mode was entered from (Exit returns there)
    "flash": None,  # one message to show after a rerun: (kind, text)
    "check_findings": 0,  # damages the last integrity check named (the Repair button shows then)
    "cur_q": ("", ""),  # the question the user looks at on every page: (corpus question id, typed text)
    "methods": list,  # the methods Compare runs (empty: T2RAG and KG2RAG); components.shell.link
    "url_restored": False,  # the link's question, methods, settings and step were read into this session
    "url_autorun": "",  # "armed" after a link with a question, then the page (url path) that runs it once
    "url_step": 0,  # the step the linked view opens on, once its result is there
    "present_autorun": False,  # a reloaded presentation: run its question again, then present it
    "present_methods": list,  # the methods of that run (the link's `methods`)
    "cmp_verdict_slot": None,  # this run's place for Compare's verdict at the top (reset every run)
}


def page_keys(page: str) -> tuple[str, str, str]:
    """A question page's (question widget prefix, result key, stepper key): Compare's, or a method
    page's named after its URL path (`ask_q`, `ask_result`, `ask_step`)."""
    if page == "compare":
        return "cmp_q", "compare", "cmp_sync"
    return f"{page}_q", f"{page}_result", f"{page}_step"


def method_pages() -> list[str]:
    """The URL paths of the registered methods' own pages (a plug-in with a `page` included)."""
    from engine.methods.registry import METHODS

    return [m.page for m in METHODS.values() if m.page]


def url_pages() -> dict[str, tuple[str, str, str]]:
    """Pages with a question box and a result: url path -> `page_keys`. components/shell/link.py
    keeps one question across them and names it in the URL."""
    return {page: page_keys(page) for page in [*method_pages(), "compare"]}


def init_state() -> None:
    """Set every session key this app uses, once per session. Called first by app.py."""
    ss = st.session_state
    if "settings" not in ss:
        from engine.methods.registry import load_plugins

        load_plugins()  # methods of installed plug-ins (entry points) join the registry, once a process
        try:
            ss["settings"] = AppSettings.from_env()
        except ValueError as exc:  # an operator variable that does not parse: say which, run nothing
            st.error(f"The server's configuration is invalid: {exc}")
            st.stop()
    for key, default in _DEFAULTS.items():
        if key not in ss:
            ss[key] = default() if callable(default) else default
    for page in method_pages():  # its last run (or reopened trace), its stepper, its last what-if
        _, result_key, step_key = page_keys(page)
        for key, default in ((result_key, None), (step_key, 0), (f"{page}_whatif", None)):
            if key not in ss:
                ss[key] = default
    s: AppSettings = ss["settings"]
    if ss["session"] is None:
        from engine.llm.litellm_call import EndpointPolicy, set_policy
        from engine.session import Session

        # the trust boundary of a served app: environment keys only to the operator's endpoints
        set_policy(EndpointPolicy.strict(s.trusted_bases))
        ss["session"] = Session.from_app(s)
    if ss["corpus"] is None:
        names = corpus_names()
        # a link may name the corpus (`?corpus=name`): shareable demo links open on it
        wanted = st.query_params.get("corpus")
        if wanted in names:
            ss["corpus"] = wanted
        else:
            ss["corpus"] = SAMPLE_CORPUS if SAMPLE_CORPUS in names else (names[0] if names else None)


def settings() -> AppSettings:
    return st.session_state["settings"]


def is_demo() -> bool:
    return bool(settings().demo)


def session():
    """The engine's Session of this browser session."""
    return st.session_state["session"]


# --- shared resources ---------------------------------------------------------------------------


@st.cache_resource(show_spinner="Loading the embedding model...")
def _workspace(root: str):
    from engine.store import open_workspace

    ws = open_workspace(replace(_settings_here(), workspace=Path(root)))
    ws.on_wait = _say_we_wait  # a corpus another process writes: drop, restore, repair wait and say so
    return ws


def _say_we_wait(message: str) -> None:
    """The engine's "waiting for the corpus's write lock" line, as a toast in the page run that waits
    (the engine calls it from that run's thread); nothing outside a page run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is not None:
        st.toast(message)


def _settings_here() -> AppSettings:
    """This session's settings in a page run; outside one (the server's own warm-up thread, before
    any visitor) the server's environment, which is what every session's settings are read from."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return AppSettings.from_env()
    return settings()


def workspace():
    return _workspace(str(settings().workspace))


@st.cache_resource(show_spinner="Opening the corpus...")
def _open_corpus(root: str, name: str):
    return _workspace(root).open(name)


def corpus_names() -> list[str]:
    root = settings().workspace
    if not Path(root).exists():
        return []
    try:
        return sorted(workspace().list())
    except Exception:  # a broken workspace shows as empty; the Corpora page reports details
        return []


def current_corpus():
    """The opened corpus the user picked, or None."""
    name = st.session_state.get("corpus")
    if not name:
        return None
    return _open_corpus(str(settings().workspace), name)


def require_corpus(hint: str = "Pick or create a corpus first (Corpora page)."):
    """The opened current corpus, or a readable note and the end of the page run."""
    from components.shell.safe import engine_errors

    corpus = None
    with engine_errors("Opening the corpus"):
        corpus = current_corpus()
    if corpus is None:
        st.info(hint)
        st.stop()
    return corpus


def forget_corpus() -> None:
    """Drop cached corpus handles (after a drop or a rebuild)."""
    _open_corpus.clear()
    _workspace.clear()


def select_corpus(name: str | None) -> None:
    ss = st.session_state
    if ss.get("corpus") != name:
        ss["corpus"] = name
        ss["cur_q"] = ("", "")  # a question id names a question of one corpus
        clear_results()


def clear_results() -> None:
    ss = st.session_state
    pages = [page_keys(p) for p in method_pages()]
    for key in [r for _, r, _ in pages] + ["compare", "eval_report"]:
        ss[key] = None
    for key in [s for _, _, s in pages] + ["present_step"]:
        ss[key] = 0
    reset_steppers("cmp_step_")
    reset_steppers("cmp_sync")


def reset_steppers(prefix: str) -> None:
    """Put every stepper whose state key starts with `prefix` back on its first step (or, right
    after a link's question ran, on the step the link names)."""
    ss = st.session_state
    for key in [
        k
        for k in ss.keys()
        if isinstance(k, str) and k.startswith(prefix) and not k.endswith(("_prev", "_next", "_slider"))
    ]:
        ss[key] = 0
        if ss.get("url_step") and key in {spec[2] for spec in url_pages().values()}:
            ss[key], ss["url_step"] = ss["url_step"], 0  # right after a link's question ran: its step


# --- reasoner and method settings ---------------------------------------------------------------


def model_label() -> str:
    return session().label()


def make_reasoner(corpus=None):
    """A reasoner for one run, from the session's model, endpoint and key (the offline reasoner
    matches by embeddings, so it gets the corpus's embedder)."""
    return session().reasoner(corpus)


def method_settings(name: str):
    """The session's settings for a method (the paper's defaults until the user changes them)."""
    return session().settings_for(name)


def set_method_settings(name: str, values: dict[str, Any]) -> None:
    session().set_method_settings(name, **values)


def reset_method_settings(name: str) -> None:
    session().reset_method_settings(name)


def flash(kind: str, text: str) -> None:
    """Queue a message to show after the next rerun (st.rerun drops what was drawn)."""
    st.session_state["flash"] = (kind, text)


def show_flash() -> None:
    msg = st.session_state.get("flash")
    if msg:
        kind, text = msg
        getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")(text)
        st.session_state["flash"] = None


def ensure_app() -> None:
    """Make sure app.py (state, sidebar, st.navigation) runs, even when Streamlit ran a page alone.

    Streamlit still honours the old `pages/` folder convention until the first st.navigation call:
    when the first request to a fresh server is a deep link (`/ask`), or in AppTest reruns, it runs
    `pages/ask.py` by itself, without app.py. Every page calls this first; in that case it switches
    the legacy mode off and reruns, so app.py runs and routes to the same page by its url path.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a Streamlit without the legacy flag: app.py always runs first
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
    init_state()


def sticky_expander(label: str, key: str, expanded: bool = False):
    """An expander that stays as the user left it. A plain one is identified by its position, so
    a rerun that changes what is drawn above it (the stepper's Next, a number input) redraws it as
    new, closed; keyed, it keeps its identity and its open state. `expanded` is the state it opens
    in (a what-if passes True in the run of its Re-run click, to show the diff it draws).

    The same view can be drawn twice on a page (a call replayed in a what-if, a method on
    Compare and in its own column), so a key already used in this script run gets a suffix
    (`_2`, `_3`…): the n-th use of a key is the same expander on every rerun."""
    return st.expander(label, expanded=expanded, key=_unused_key(key))


def content_key(kind: str, *parts: object) -> str:
    """A widget key named by what the widget shows (a call's prompt, a context, a tree), so an
    expander keeps its open state while the step above it changes length."""
    import hashlib

    digest = hashlib.sha1("\x1f".join(map(str, parts)).encode("utf-8", "replace")).hexdigest()[:12]
    return f"{kind}_{digest}"


def _unused_key(key: str) -> str:
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        used = ctx.shared.widget_user_keys_this_run if ctx is not None else ()
    except (ImportError, AttributeError):  # another Streamlit: Streamlit itself reports a duplicate
        return key
    name, n = key, 1
    while name in used:
        n += 1
        name = f"{key}_{n}"
    return name
