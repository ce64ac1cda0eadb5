"""The methods (T2RAG, KG2RAG, the baselines, IRCoT), one registry of them, and their shared result
types. Method modules are imported on first use (see registry.py)."""

from __future__ import annotations

from engine.methods.base import (  # noqa: F401
    TRACE_TYPES,
    Method,
    Result,
    Usage,
    load_result,
    save_result,
)
from engine.methods.registry import (  # noqa: F401
    COMPARED,
    METHODS,
    MethodInfo,
    app_methods,
    build_method,
    method_class,
    method_info,
    register_all_traces,
    settings_class,
    title,
)
