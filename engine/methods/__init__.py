"""The methods (T2RAG, KG2RAG, the baselines, IRCoT), one registry of them, and their shared result
types. Method modules are imported on first use (see registry.py)."""
from __future__ import annotations

from engine.methods.base import Method, Result, TRACE_TYPES, Usage, load_result, save_result  # noqa: F401
from engine.methods.registry import (COMPARED, METHODS, MethodInfo, app_methods, build_method,  # noqa: F401
                                     method_class, method_info, register_all_traces, settings_class, title)
