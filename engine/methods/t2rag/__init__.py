"""T2RAG (ACL 2026), triplet-driven thinking: the question becomes query triplets with `?`
placeholders, rounds of proposition retrieval fill them until none is left, then the answer is
synthesized from the resolved facts (SPEC.md section 1).

    from engine.methods.t2rag import T2RAG, T2RAGSettings
    result = T2RAG(reasoner).answer("Who is the child of the performer of Me and Bobby McGee?", corpus)

The package follows the SPEC's steps: `method.py` the loop (decompose, rounds, synthesize) and its
trace, `state.py` the three triplet queues and the binding rules (steps 2 and 5), `retrieval.py` the
queries and the global proposition pool (step 3), `trace.py` the settings and typed trace.
"""

from engine.methods.t2rag.method import NO_TRIPLETS, T2RAG
from engine.methods.t2rag.trace import STOP_REASONS, T2RAGSettings, T2RAGTrace

__all__ = ["NO_TRIPLETS", "STOP_REASONS", "T2RAG", "T2RAGSettings", "T2RAGTrace"]
