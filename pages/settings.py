"""Settings: the model (offline rules or any litellm model string), endpoint, key, method knobs."""

import streamlit as st

from components.shell import state
from components.shell.link_settings import describe_difference
from components.shell.safe import engine_errors
from components.shell.settings_form import settings_form, show_in_form
from components.widgets.preset_badge import preset_picker, show_settings_badge
from engine.methods.presets import has_presets
from engine.methods.registry import COMPARED

state.ensure_app()

st.title("⚙️ Settings")
ss = st.session_state
demo = state.is_demo()

st.subheader("Model")
st.caption(
    "Leave the model empty for the offline reasoner (rules, no LLM, no key). Any litellm model "
    "string works otherwise: `openai/gpt-4o-mini`, `gemini/gemini-2.5-flash`, `ollama/llama3`, "
    "`hosted_vllm/<name>` with an API base."
)


@st.cache_data(ttl=30, show_spinner=False)
def _ollama_models() -> list[str]:
    from engine.llm import list_ollama_models

    return list_ollama_models()


ollama = _ollama_models()
sess = state.session()
if demo:
    st.info(
        "Read-only demo: the operator fixed the model, endpoint and method settings. They are shown, not changeable."
    )
with st.form("model_form"):
    choice = ""
    if ollama:
        choice = st.selectbox(
            "Local Ollama models (a server answered)",
            [""] + ollama,
            disabled=demo,
            format_func=lambda m: m or "(type a model below instead)",
        )
    model = st.text_input(
        "Model", value=sess.model, placeholder="empty = offline reasoner", key="set_model", disabled=demo
    )
    api_base = st.text_input(
        "API base (optional)",
        value=sess.api_base,
        disabled=demo,
        placeholder="http://127.0.0.1:8000/v1",
        key="set_api_base",
        help="An endpoint the operator did not configure needs your own key below: the "
        "server's keys are only sent to the operator's endpoints.",
    )
    key = st.text_input(
        "API key (kept in this browser session only; never saved or exported)",
        value="",
        type="password",
        disabled=demo,
        key="set_api_key",
        placeholder="••••••• (set)" if sess.key_set else "not set: the provider's env variable is used",
    )
    c1, c2 = st.columns(2)
    apply = c1.form_submit_button("Apply", type="primary", key="set_apply", disabled=demo)
    offline = c2.form_submit_button("Use the offline reasoner", key="set_offline", disabled=demo)
if apply or offline:
    with engine_errors("Applying the model"):  # the session refuses in demo mode, whatever the widgets sent
        if offline:
            sess.set_model("", "")
        else:
            sess.set_model(choice or model, api_base, key or None)
        with st.spinner("Checking the model with one minimal request..."):
            ok, message = sess.check_model()
        (st.success if ok else st.error)(f"Reasoner: {sess.label()} — {message}")
if not ollama:
    st.caption("No local Ollama server answered on 127.0.0.1:11434.")
if sess.key_set and not demo and st.button("Forget the API key"):
    with engine_errors("Forgetting the key"):
        sess.forget_key()
        st.rerun()
st.caption(
    f"In use: **{sess.label()}**"
    + (f" at {sess.api_base}" if sess.api_base else "")
    + (" · key set for this session" if sess.key_set else "")
)
if sess.budget is not None:
    used = sess.budget.session_usage(sess.session_id)
    st.caption(
        f"Budget used by this session: {used.questions} questions, {used.tokens} tokens, "
        f"${used.dollars:.4f} (caps: session {dict(sess.budget.session_caps) or 'none'}, "
        f"day {dict(sess.budget.day_caps) or 'none'})"
    )

st.subheader("Method settings")
st.caption(
    "Each method runs its `tuned` preset (our measured defaults) until you load another: `paper` is the "
    "paper and its authors' code, with SPEC's named bug fixes only. They apply to Ask, KG2RAG, Compare "
    "and Evaluate; every result names its preset and lists how it departs from the paper."
)


def _reset(name: str) -> None:
    """A callback: the paper preset into the session and into every field, before the form is drawn."""
    with engine_errors("Resetting the settings"):
        show_in_form(sess.use_preset(name, "paper"), key=f"settings_{name}")


for name, label in state.method_labels().items():
    with state.sticky_expander(label, f"settings_{name}_open", expanded=name in COMPARED):
        with engine_errors(f"{label} settings"):
            form_key = f"settings_{name}"
            if has_presets(name):
                show_settings_badge(name, state.method_settings(name), key=f"settings_badge_{name}")
                custom = describe_difference(name, state.method_settings(name))
                if custom:  # neither preset: say which fields make it so
                    st.caption(f"✏️ Custom: {custom}.", help="Load a preset to run it as it is.")
                picked = preset_picker(name, disabled=demo)
                if picked:
                    show_in_form(sess.use_preset(name, picked), key=form_key)  # every field, before it is drawn
                    st.rerun()
            values = settings_form(name, state.method_settings(name), key=form_key, disabled=demo)
            if values is not None:
                state.set_method_settings(name, values)
                state.flash("success", f"{label} settings applied.")
                st.rerun()  # the badge above the form names what now runs
            st.button(
                "Reset to the paper's settings", key=f"reset_{name}", disabled=demo, on_click=_reset, args=(name,)
            )
