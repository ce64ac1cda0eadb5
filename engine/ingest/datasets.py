"""Multi-hop QA datasets and corpus files in JSON / JSON Lines -> Documents + Questions.

Recognised by their shape, not their name:

* HotpotQA (distractor) and 2WikiMultihopQA records: `context = [[title, [sentences]]]`,
  `supporting_facts = [[title, sent_id]]` (2Wiki also carries `evidences`). The Hugging Face
  layout (`context = {"title": [...], "sentences": [[...]]}`) is accepted too.
* MuSiQue records: `paragraphs = [{idx, title, paragraph_text, is_supporting}]`, `answer_aliases`.
* HippoRAG / T2RAG benchmark files: `corpus.json = [{title, text}]` and a questions file whose
  records hold `_id|id, question, answer (str | list)` and `paragraphs | context | supporting_facts`.
* The HippoRAG HotpotQA corpus dict `{title: [sentences]}`.

A paragraph met in several questions is one Document (same title and text -> same doc_id).
Dataset sentences are kept with their numbering, which the gold `(title, sent_id)` facts use.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from engine.chunking import make_doc_id
from engine.ingest.decode import IngestError, clean_text, looks_like_jsonl, parse_json, parse_jsonl
from engine.types import Document, Question

#: Licence of each dataset whose records this module recognises; shown wherever a copy ships.
DATASET_ATTRIBUTION = {
    "hotpotqa": "HotpotQA (Yang et al., 2018), CC BY-SA 4.0",
    "musique": "MuSiQue (Trivedi et al., 2022), CC BY 4.0",
    "2wiki": "2WikiMultihopQA (Ho et al., 2020), Apache-2.0",
}
_2WIKI_TYPES = frozenset({"compositional", "inference", "bridge_comparison"})
_HOP = re.compile(r"^(\d+hop)")


@dataclass
class DatasetFile:
    """What one JSON file held. `corpus_only` files have passages but no questions."""

    documents: list[Document] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    corpus_only: bool = False
    #: titles of every paragraph the kept questions came with (used by `limit_questions`)
    question_titles: set[str] = field(default_factory=set)


def _s(v: Any) -> str:
    """A string field, or "" for anything that is not a plain string or number."""
    if isinstance(v, str):
        return clean_text(v).strip()
    if isinstance(v, bool) or v is None:
        return ""
    if isinstance(v, (int, float)) and not (isinstance(v, float) and not math.isfinite(v)):
        return str(v)
    return ""


def join_sentences(sentences: list[str]) -> str:
    """HotpotQA sentences carry their leading space, 2Wiki ones do not: add one only if needed."""
    out = ""
    for s in sentences:
        if out and s and not out[-1].isspace() and not s[0].isspace():
            out += " "
        out += s
    return out.strip()


def _sentence_doc(title: str, sentences: list[Any], kind: str, source: str) -> Document | None:
    raw = [clean_text(s) if isinstance(s, str) else "" for s in sentences]
    text = join_sentences(raw)
    if not title or not text:
        return None
    return Document(make_doc_id(title, text), title, text, source, kind, tuple(s.strip() for s in raw))


def _text_doc(title: str, text: str, kind: str, source: str) -> Document | None:
    if not text:
        return None
    title = title or text[:60]
    return Document(make_doc_id(title, text), title, text, source, kind)


def _answers(rec: dict) -> tuple[str, ...]:
    out: list[str] = []
    for key in ("answer", "answers", "answer_aliases", "possible_answers"):
        v = rec.get(key)
        if isinstance(v, str) and v.lstrip().startswith("["):  # PopQA stores a JSON list as a string
            try:
                v = json.loads(v)
            except (ValueError, RecursionError):
                pass
        vals = v if isinstance(v, list) else [v]
        for a in vals:
            a = _s(a)
            if a and a not in out:
                out.append(a)
    return tuple(out)


def _context(rec: dict) -> list[tuple[str, list[Any]]]:
    ctx = rec.get("context")
    if isinstance(ctx, dict):  # Hugging Face layout
        titles, sents = ctx.get("title") or [], ctx.get("sentences") or []
        return [(_s(t), s if isinstance(s, list) else []) for t, s in zip(titles, sents)]
    out = []
    for item in ctx if isinstance(ctx, list) else []:
        if isinstance(item, (list, tuple)) and len(item) == 2:
            sents = item[1] if isinstance(item[1], list) else [item[1]]
            out.append((_s(item[0]), sents))
        elif isinstance(item, dict):  # [{title, sentences|text}]
            sents = item.get("sentences")
            out.append((_s(item.get("title")), sents if isinstance(sents, list) else [item.get("text")]))
    return out


def _supporting_facts(rec: dict) -> tuple[tuple[str, int], ...]:
    sf = rec.get("supporting_facts")
    pairs: list[Any] = []
    if isinstance(sf, dict):
        pairs = list(zip(sf.get("title") or [], sf.get("sent_id") or []))
    elif isinstance(sf, list):
        pairs = sf
    out = []
    for p in pairs:
        if isinstance(p, (list, tuple)) and len(p) >= 2 and _s(p[0]):
            try:
                out.append((_s(p[0]), int(p[1])))
            except (TypeError, ValueError):
                continue
    return tuple(out)


def _dataset_name(rec: dict) -> str:
    if isinstance(rec.get("paragraphs"), list):
        return "musique"
    if "evidences" in rec or rec.get("type") in _2WIKI_TYPES:
        return "2wiki"
    if "context" in rec:
        return "hotpotqa"
    return "qa"


def _record(rec: Any, i: int, source: str) -> tuple[Question, list[Document], set[str]]:
    if not isinstance(rec, dict):
        raise ValueError(f"record {i} is a {type(rec).__name__}, not an object")
    question = _s(rec.get("question"))
    if not question:
        raise ValueError(f"record {i} has no question text")
    name = _dataset_name(rec)
    qid = _s(rec.get("_id")) or _s(rec.get("id")) or _s(rec.get("qid")) or f"{source}:{i}"
    docs: list[Document] = []
    titles: set[str] = set()
    support: list[str] = []
    support_docs: list[str] = []
    if name == "musique":
        for p in rec["paragraphs"]:
            if not isinstance(p, dict):
                continue
            title = _s(p.get("title"))
            doc = _text_doc(title, _s(p.get("paragraph_text")) or _s(p.get("text")), "musique", source)
            if doc:
                docs.append(doc)
                titles.add(doc.title)
                if p.get("is_supporting") is True:
                    if doc.title not in support:
                        support.append(doc.title)
                    if doc.doc_id not in support_docs:
                        support_docs.append(doc.doc_id)
    else:
        for title, sents in _context(rec):
            doc = _sentence_doc(title, sents, name if name != "qa" else "hotpotqa", source)
            if doc:
                docs.append(doc)
                titles.add(doc.title)
    facts = _supporting_facts(rec)
    for t, _ in facts:
        if t not in support:
            support.append(t)
    qtype = _s(rec.get("type"))
    if not qtype and name == "musique":
        m = _HOP.match(qid)
        qtype = m.group(1) if m else ""
    q = Question(qid, question, _answers(rec), qtype, facts, tuple(support), name, tuple(support_docs))
    return q, docs, titles | set(support)


def _records_to_file(records: list[Any], source: str, limit: int | None) -> DatasetFile:
    out = DatasetFile()
    bad: list[str] = []
    seen_q: set[str] = set()
    for i, rec in enumerate(records):
        if limit is not None and len(out.questions) >= limit:
            break
        try:
            q, docs, titles = _record(rec, i, source)
        except ValueError as e:
            bad.append(str(e))
            continue
        if q.qid in seen_q:
            continue
        seen_q.add(q.qid)
        out.questions.append(q)
        out.documents.extend(docs)
        out.question_titles |= titles
    if bad:
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        out.warnings.append(f"skipped {len(bad)} record(s): {'; '.join(bad[:3])}{more}")
    if not out.questions:
        raise IngestError("has no usable question records" + (f": {bad[0]}" if bad else ""))
    return out


def _corpus_records(records: list[Any], source: str) -> DatasetFile:
    out = DatasetFile(corpus_only=True)
    skipped = 0
    for rec in records:
        doc = None
        if isinstance(rec, dict):
            title = _s(rec.get("title"))
            sents = rec.get("sentences")
            if isinstance(sents, list):
                doc = _sentence_doc(title, sents, "corpus_json", source)
            else:
                text = _s(rec.get("text")) or _s(rec.get("paragraph_text")) or _s(rec.get("contents"))
                doc = _text_doc(title, text, "corpus_json", source)
        if doc:
            out.documents.append(doc)
        else:
            skipped += 1
    if not out.documents:
        raise IngestError("has no passages with text")
    if skipped:
        out.warnings.append(f"skipped {skipped} passage(s) with no text")
    return out


def _is_triplet_dict(value: dict) -> bool:
    return bool(value) and all(k.strip().lstrip("-").isdigit() for k in value) and all(
        isinstance(v, list) and all(isinstance(t, list) for t in v) for v in value.values()
    )


def parse_dataset_value(value: Any, source: str, limit: int | None = None) -> DatasetFile:
    """Recognise a parsed JSON value's layout and convert it; `IngestError` if unrecognised."""
    if isinstance(value, dict):
        if isinstance(value.get("docs"), list):
            raise IngestError("is a triplet file (HippoRAG/T2RAG OpenIE output): import it as triplets")
        if _is_triplet_dict(value):
            raise IngestError("is a KG2RAG per-title triplet file: import it as triplets")
        if isinstance(value.get("data"), list):
            return parse_dataset_value(value["data"], source, limit)
        if "question" in value:
            return _records_to_file([value], source, limit)
        if value and all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value.values()):
            out = DatasetFile(corpus_only=True)  # {title: [sentences]}
            for title, sents in value.items():
                doc = _sentence_doc(_s(title), sents, "corpus_json", source)
                if doc:
                    out.documents.append(doc)
            if out.documents:
                return out
        raise IngestError(
            "is JSON, but not a layout this app reads (QA records, [{title, text}] or {title: [sentences]})"
        )
    if isinstance(value, list):
        dicts = [r for r in value if isinstance(r, dict)]
        if not dicts:
            raise IngestError("holds no records" if not value else "holds a list of non-objects, not records")
        if any("question" in r for r in dicts[:50]):
            return _records_to_file(value, source, limit)
        if any(("text" in r or "paragraph_text" in r or "sentences" in r or "contents" in r) for r in dicts[:50]):
            return _corpus_records(value, source)
        raise IngestError("holds records with neither 'question' nor 'title'/'text' fields")
    raise IngestError(f"holds a JSON {type(value).__name__}, not a dataset")


def read_dataset(name: str, text: str, limit: int | None = None) -> DatasetFile:
    """A `.json` or `.jsonl` file's text -> DatasetFile (JSON Lines is sniffed, not trusted to the name)."""
    if name.lower().endswith((".jsonl", ".ndjson")) or looks_like_jsonl(text):
        values, problems = parse_jsonl(text)
        out = parse_dataset_value(values, name, limit)
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            out.warnings.insert(0, f"skipped {len(problems)} bad line(s): {'; '.join(problems[:3])}{more}")
        return out
    return parse_dataset_value(parse_json(text), name, limit)
