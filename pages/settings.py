"""Settings: the model (offline rules or any litellm model string), endpoint, key, method knobs."""
import streamlit as st

from components import state
from components.safe import engine_errors
from components.settings_form import settings_form

state.ensure_app()

st.title("⚙️ Settings")
ss = st.session_state
demo = state.is_demo()

st.subheader("Model")
st.caption("Leave the model empty for the offline reasoner (rules, no LLM, no key). Any litellm model "
           "string works otherwise: `openai/gpt-4o-mini`, `gemini/gemini-2.5-flash`, `ollama/llama3`, "
           "`hosted_vllm/<name>` with an API base.")


@st.cache_data(ttl=30, show_spinner=False)
def _ollama_models() -> list[str]:
    from engine.llm import list_ollama_models

    return list_ollama_models()


ollama = _ollama_models()
with st.form("model_form"):
    choice = ""
    if ollama:
        choice = st.selectbox("Local Ollama models (a server answered)", [""] + ollama,
                              format_func=lambda m: m or "(type a model below instead)")
    model = st.text_input("Model", value=ss["model"] or "", placeholder="empty = offline reasoner", key="set_model")
    api_base = st.text_input("API base (optional)", value=ss["api_base"] or "",
                             placeholder="http://127.0.0.1:8000/v1", key="set_api_base")
    key = st.text_input("API key (kept in this browser session only; never saved or exported)", value="",
                        type="password", disabled=demo, key="set_api_key",
                        placeholder="••••••• (set)" if ss["api_key"] else "not set: the provider's env variable is used")
    c1, c2 = st.columns(2)
    apply = c1.form_submit_button("Apply", type="primary", key="set_apply")
    offline = c2.form_submit_button("Use the offline reasoner", key="set_offline")
if apply:
    ss["model"] = (choice or model).strip()
    ss["api_base"] = api_base.strip()
    if key and not demo:
        ss["api_key"] = key.strip()
    st.success(f"Reasoner: {state.model_label()}")
if offline:
    ss["model"], ss["api_base"] = "", ""
    st.success("Reasoner: offline-rules")
if not ollama:
    st.caption("No local Ollama server answered on 127.0.0.1:11434.")
if ss["api_key"] and not demo and st.button("Forget the API key"):
    ss["api_key"] = ""
    st.rerun()
st.caption(f"In use: **{state.model_label()}**" + (f" at {ss['api_base']}" if ss["api_base"] else "")
           + (" · key set for this session" if ss["api_key"] else ""))

st.subheader("Method settings")
st.caption("The papers' defaults until you change them; they apply to Ask, KG2RAG, Compare and Evaluate.")
for name, label in state.METHOD_LABELS.items():
    with st.expander(label, expanded=name in ("t2rag", "kg2rag")):
        with engine_errors(f"{label} settings"):
            values = settings_form(name, state.method_settings(name), key=f"settings_{name}")
            if values is not None:
                state.set_method_settings(name, values)
                st.success("Applied.")
            if st.button("Reset to the paper's defaults", key=f"reset_{name}"):
                state.reset_method_settings(name)
                st.rerun()
