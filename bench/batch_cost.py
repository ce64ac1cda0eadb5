"""What extracting a million chunks costs, the normal way and through the providers' batch API.

    .venv/bin/python bench/batch_cost.py [--model openai/gpt-4o-mini] [--chunks 1000000]

Tokens per chunk are measured on the bundled sample corpora (sample_corpora/*.json, chunked with
the default settings): the prompt tokens of the exact extraction prompt each style sends (counted
with litellm's tokenizer for the model), and the completion tokens of the estimate's rule
(engine.triplets.extraction.COMPLETION_RATIO). They are scaled to `--chunks` and priced with litellm's
bundled price table: the normal price and the batch price (litellm's `*_cost_per_token_batches`,
else half the normal price). Nothing is sent anywhere.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.core.chunking import chunk_documents  # noqa: E402
from engine.ingest import load_paths  # noqa: E402
from engine.triplets.extraction import estimate_extraction  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", help="litellm model string (repeatable); default gpt-4o-mini, gpt-4o")
    ap.add_argument("--chunks", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    models = args.model or ["openai/gpt-4o-mini", "openai/gpt-4o"]
    files = sorted((ROOT / "sample_corpora").glob("*.json"))
    chunks = chunk_documents(load_paths(files).documents)
    print(f"sample: {len(chunks)} chunks from {', '.join(f.name for f in files)}; scaled to {args.chunks:,} chunks\n")
    print(f"prompt tokens counted with {estimate_extraction(chunks[:1], models[0]).token_counter}\n")
    print("| model | style | prompt tok/chunk | completion tok/chunk | normal $ | batch $ | batch price from |")
    print("|---|---|---|---|---|---|---|")
    for model in models:
        for style in ("json", "kg2rag", "json+ner"):
            est = estimate_extraction(chunks, model, style)
            scale = args.chunks / est.chunks
            normal = "unknown" if est.cost is None else f"{est.cost * scale:,.0f}"
            batch = "unknown" if est.batch_cost is None else f"{est.batch_cost * scale:,.0f}"
            source = est.batch_price_source + (", 2 batches in sequence" if style == "json+ner" else "")
            per = f"{est.prompt_tokens / est.chunks:.0f} | {est.completion_tokens / est.chunks:.0f}"
            print(f"| {model} | {style} | {per} | {normal} | {batch} | {source} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
