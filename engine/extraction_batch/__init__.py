"""Triplet extraction through the providers' batch APIs (OpenAI-compatible files + batches).

`run_batch_extraction` is the runner, `BatchAPI` the endpoint, `BatchState` the corpus's record of
its open batches; `python -m engine extract NAME --batch` is the command.
"""

from engine.extraction_batch.api import BatchAPI, BatchInfo
from engine.extraction_batch.runner import BatchSummary, run_batch_extraction
from engine.triplets.batch_state import STATE_FILE, BatchState

__all__ = ["STATE_FILE", "BatchAPI", "BatchInfo", "BatchState", "BatchSummary", "run_batch_extraction"]
