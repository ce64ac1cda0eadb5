"""Settings: the model (offline rules or any litellm model string), endpoint, key, method knobs."""
import streamlit as st

from components import state
from components.safe import engine_errors
from components.settings_form import settings_form

state.ensure_app()

st.title("⚙️ Settings")
demo = state.is_demo()

st.subheader("Model")
st.caption("Leave the model empty for the offline reasoner (rules, no LLM, no key). Any litellm model "
           "string works otherwise: `openai/gpt-4o-mini`, `gemini/gemini-2.5-flash`, `ollama/llama3`, "
           "`hosted_vllm/<name>` with an API base.")


@st.cache_data(ttl=30, show_spinner=False)
def _ollama_models() -> list[str]:
    from engine.llm import list_ollama_models

    return list_ollama_models()


sess = state.session()
cfg = sess.config
if demo:
    st.info("Read-only demo: the operator fixed the model, endpoint, key and method settings "
            "(TRIPLET_LENS_MODEL, TRIPLET_LENS_API_BASE). They are shown here but cannot be changed.")
ollama = [] if demo else _ollama_models()
with st.form("model_form"):
    choice = ""
    if ollama:
        choice = st.selectbox("Local Ollama models (a server answered)", [""] + ollama,
                              format_func=lambda m: m or "(type a model below instead)")
    model = st.text_input("Model", value=cfg.model, placeholder="empty = offline reasoner", key="set_model",
                          disabled=demo)
    api_base = st.text_input("API base (optional)", value=cfg.api_base, disabled=demo,
                             placeholder="http://127.0.0.1:8000/v1", key="set_api_base",
                             help="The server's provider keys only go to the provider's own endpoint and to the "
                                  "bases the operator listed (TRIPLET_LENS_API_BASES). Any other base needs "
                                  "your own key below.")
    key = st.text_input("API key (kept in this browser session only; never saved or exported)", value="",
                        type="password", disabled=demo, key="set_api_key",
                        placeholder="••••••• (set)" if sess.has_key else "not set: the server's provider key is used")
    c1, c2 = st.columns(2)
    apply = c1.form_submit_button("Apply", type="primary", key="set_apply", disabled=demo)
    offline = c2.form_submit_button("Use the offline reasoner", key="set_offline", disabled=demo)
if apply:
    # the engine refuses every change in demo mode (ConfigLocked), even if a forged click gets here
    with engine_errors("Applying the model"):
        with st.spinner("Checking the model with one minimal request..."):
            status = sess.apply_model((choice or model), api_base, key or None)
        (st.success if status.ok else st.error)(f"Reasoner: {status.message}")
if offline:
    with engine_errors("Switching to the offline reasoner"):
        sess.configure(model="", api_base="")
        st.success("Reasoner: offline-rules")
if not ollama and not demo:
    st.caption("No local Ollama server answered on 127.0.0.1:11434.")
if sess.has_key and not demo and st.button("Forget the API key"):
    with engine_errors("Forgetting the key"):
        sess.forget_key()
        st.rerun()
cfg = sess.config
st.caption(f"In use: **{state.model_label()}**" + (f" at {cfg.api_base}" if cfg.api_base else "")
           + (" · key set for this session" if sess.has_key else ""))
if sess.budget is not None and sess.budget.active:
    st.caption(f"Operator caps: per session {sess.settings.session_caps.describe()}; "
               f"per day {sess.settings.day_caps.describe()}.")

st.subheader("Method settings")
st.caption("The papers' defaults until you change them; they apply to Ask, KG2RAG, Compare and Evaluate.")
for name, label in state.METHOD_LABELS.items():
    with st.expander(label, expanded=name in ("t2rag", "kg2rag")):
        with engine_errors(f"{label} settings"):
            values = settings_form(name, state.method_settings(name), key=f"settings_{name}", disabled=demo)
            if values is not None:
                state.set_method_settings(name, values)  # ConfigLocked in demo, shown as an error
                st.success("Applied.")
            if st.button("Reset to the paper's defaults", key=f"reset_{name}", disabled=demo):
                state.reset_method_settings(name)
                st.rerun()
