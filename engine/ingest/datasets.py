"""Multi-hop QA datasets and corpus files in JSON / JSON Lines -> Documents + Questions.

Recognised by their shape, not their name:

* HotpotQA (distractor) and 2WikiMultihopQA records: `context = [[title, [sentences]]]`,
  `supporting_facts = [[title, sent_id]]` (2Wiki also carries `evidences`). The Hugging Face
  layout (`context = {"title": [...], "sentences": [[...]]}`) is accepted too.
* MuSiQue records: `paragraphs = [{idx, title, paragraph_text, is_supporting}]`, `answer_aliases`,
  `answerable`. The gold paragraphs' documents are kept with the question (`supporting_docs`), so
  retrieval is scored by paragraph as MuSiQue's official `SupportMetric` does, not by title.
* IRCoT-processed files: `question_id, question_text, answers_objects = [{spans, number, date}]`,
  `contexts = [{idx, title, paragraph_text, is_supporting}]` (the same shape as MuSiQue's paragraphs).
* HippoRAG / T2RAG benchmark files: `corpus.json = [{title, text}]` and a questions file whose
  records hold `_id|id, question, answer (str | list)` and `paragraphs | context | supporting_facts`.
* The HippoRAG HotpotQA corpus dict `{title: [sentences]}`.

A paragraph met in several questions is one Document (same title and text -> same doc_id).
Dataset sentences are kept with their numbering, which the gold `(title, sent_id)` facts use.
A `context` that names paragraphs by title only (no text) keeps those titles as the question's gold
paragraphs when the record has no other gold; their text must come from a corpus file.
Gold evidence given as text (`evidence`: a string or a list of strings, or `evidence_list` of
`{fact}`) is kept as spans and located in the chunks at evaluation (engine/eval/evidence.py).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from engine.core.chunking import make_doc_id
from engine.core.types import Document, Question
from engine.ingest.decode import IngestError, clean_text, looks_like_jsonl, parse_json, parse_jsonl

#: Licence of each dataset whose records this module recognises; shown wherever a copy ships.
DATASET_ATTRIBUTION = {
    "hotpotqa": "HotpotQA (Yang et al., 2018), CC BY-SA 4.0",
    "musique": "MuSiQue (Trivedi et al., 2022), CC BY 4.0",
    "2wiki": "2WikiMultihopQA (Ho et al., 2020), Apache-2.0",
}
_2WIKI_TYPES = frozenset({"compositional", "inference", "bridge_comparison"})
_HOP = re.compile(r"^(\d+hop)")
#: IRCoT's `dataset` field -> our dataset name (which picks the official scoring rules)
_DATASET_ALIASES = {"hotpotqa": "hotpotqa", "2wikimultihopqa": "2wiki", "2wiki": "2wiki", "musique": "musique"}


@dataclass
class DatasetFile:
    """What one JSON file held. `corpus_only` files have passages but no questions."""

    documents: list[Document] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    corpus_only: bool = False
    #: titles of every paragraph the kept questions came with (used by `limit_questions`)
    question_titles: set[str] = field(default_factory=set)
    #: titles named by a title-only `context` (no text): gold to be matched to corpus passages
    title_only: set[str] = field(default_factory=set)


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


def _ircot_answers(objects: Any) -> list[Any]:
    """IRCoT / DROP answer objects -> their spans, number and date as answer strings."""
    out: list[Any] = []
    for obj in objects if isinstance(objects, list) else []:
        if not isinstance(obj, dict):
            continue
        spans = obj.get("spans")
        out.extend(spans if isinstance(spans, list) else [spans])
        out.append(obj.get("number"))
        date = obj.get("date")
        if isinstance(date, dict):
            out.append(" ".join(_s(date.get(k)) for k in ("day", "month", "year") if _s(date.get(k))))
    return out


def _answers(rec: dict) -> tuple[str, ...]:
    out: list[str] = []
    for a in _ircot_answers(rec.get("answers_objects")):
        a = _s(a)
        if a and a not in out:
            out.append(a)
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
    """`(title, sentences)` per context paragraph; a title-only item (a bare title, `[title]`,
    `[title, []]`, `{title}`) comes back with no sentences."""
    ctx = rec.get("context")
    if isinstance(ctx, dict):  # Hugging Face layout
        titles, sents = ctx.get("title") or [], ctx.get("sentences") or []
        titles = titles if isinstance(titles, list) else []
        sents = sents if isinstance(sents, list) else []
        sents = sents + [[]] * (len(titles) - len(sents))
        return [(_s(t), s if isinstance(s, list) else []) for t, s in zip(titles, sents)]
    out: list[tuple[str, list]] = []
    for item in ctx if isinstance(ctx, list) else []:
        if isinstance(item, str):
            out.append((_s(item), []))
        elif isinstance(item, (list, tuple)) and len(item) in (1, 2):
            sents = (item[1] if isinstance(item[1], list) else [item[1]]) if len(item) == 2 else []
            out.append((_s(item[0]), sents))
        elif isinstance(item, dict):  # [{title, sentences|text}]
            sents = item.get("sentences")
            text = item.get("text", item.get("paragraph_text"))
            out.append((_s(item.get("title")), sents if isinstance(sents, list) else [text] if text else []))
    return out


def _evidence(rec: dict) -> tuple[str, ...]:
    """Gold evidence given as text: `evidence` (a string or list of strings) or `evidence_list`
    of `{fact}` objects (MultiHop-RAG). 2Wiki's `evidences` are triplets, not text: not read here."""
    raw = rec.get("evidence")
    items = raw if isinstance(raw, list) else [raw]
    lst = rec.get("evidence_list")
    if isinstance(lst, list):
        items += [e.get("fact") if isinstance(e, dict) else e for e in lst]
    out: list[str] = []
    for e in items:
        e = _s(e) if isinstance(e, str) else ""
        if e and e not in out:
            out.append(e)
    return tuple(out)


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


def _dataset_name(rec: dict, qid: str) -> str:
    named = _DATASET_ALIASES.get(_s(rec.get("dataset")).lower())
    if named:
        return named
    if isinstance(rec.get("paragraphs"), list) or _HOP.match(qid):
        return "musique"
    if "evidences" in rec or rec.get("type") in _2WIKI_TYPES:
        return "2wiki"
    if "context" in rec:
        return "hotpotqa"
    return "qa"


def _record(rec: Any, i: int, source: str) -> tuple[Question, list[Document], set[str], set[str]]:
    """One record -> (question, its documents, every title it names, its title-only titles)."""
    if not isinstance(rec, dict):
        raise ValueError(f"record {i} is a {type(rec).__name__}, not an object")
    question = _s(rec.get("question")) or _s(rec.get("question_text"))
    if not question:
        raise ValueError(f"record {i} has no question text")
    qid = _s(rec.get("_id")) or _s(rec.get("id")) or _s(rec.get("qid")) or _s(rec.get("question_id")) or f"{source}:{i}"
    name = _dataset_name(rec, qid)
    title_only: list[str] = []
    support: list[str] = []
    support_docs: list[str] = []
    paras = rec.get("paragraphs") if isinstance(rec.get("paragraphs"), list) else rec.get("contexts")
    if isinstance(paras, list) and isinstance(rec.get("pinned_contexts"), list):
        paras = rec["pinned_contexts"] + paras  # IRCoT's IIRC: the passage the question is asked on
    if isinstance(paras, list):  # MuSiQue paragraphs, IRCoT contexts
        docs, support, support_docs = _paragraph_docs(paras, name if name != "qa" else "musique", source)
    else:
        docs, title_only = _context_docs(rec, name if name != "qa" else "hotpotqa", source)
    facts = _supporting_facts(rec)
    for t, _ in facts:
        if t not in support:
            support.append(t)
    if not support and title_only:
        # the record names its paragraphs by title only and gives no other gold: those titles are
        # the gold, matched to the corpus's passages by title (a warning counts the unmatched ones)
        support = list(dict.fromkeys(title_only))
    # MuSiQue's SupportMetric scores paragraphs (by `idx`), the others' scripts titles: the gold
    # paragraphs' documents stand for their idx (distinct within a question)
    q = Question(
        qid,
        question,
        _answers(rec),
        _qtype(rec, name, qid),
        facts,
        tuple(support),
        name,
        supporting_docs=tuple(support_docs) if name == "musique" else (),
        answerable=rec.get("answerable") is not False,
        evidence=_evidence(rec),
    )
    return q, docs, {d.title for d in docs} | set(support), set(title_only)


def _paragraph_docs(paras: list, kind: str, source: str) -> tuple[list[Document], list[str], list[str]]:
    """MuSiQue / IRCoT paragraphs -> (documents, supporting titles, supporting documents' ids)."""
    docs: list[Document] = []
    support: list[str] = []
    support_docs: list[str] = []
    for p in paras:
        if not isinstance(p, dict):
            continue
        title = _s(p.get("title"))
        doc = _text_doc(title, _s(p.get("paragraph_text")) or _s(p.get("text")), kind, source)
        gold = p.get("is_supporting") is True
        if gold and title and title not in support:
            support.append(title)
        if doc:
            docs.append(doc)
            if gold and doc.doc_id not in support_docs:
                support_docs.append(doc.doc_id)
    return docs, support, support_docs


def _context_docs(rec: dict, kind: str, source: str) -> tuple[list[Document], list[str]]:
    """HotpotQA-style `[title, sentences]` contexts -> (documents, titles given without text)."""
    docs: list[Document] = []
    title_only: list[str] = []
    for title, sents in _context(rec):
        doc = _sentence_doc(title, sents, kind, source)
        if doc:
            docs.append(doc)
        elif title and not any(isinstance(s, str) and s.strip() for s in sents):
            title_only.append(title)
    return docs, title_only


def _qtype(rec: dict, name: str, qid: str) -> str:
    """The record's question type; MuSiQue writes its hop count into the id ("2hop__...")."""
    qtype = _s(rec.get("type"))
    if not qtype and name == "musique":
        m = _HOP.match(qid)
        qtype = m.group(1) if m else ""
    return qtype


def _records_to_file(records: list[Any], source: str, limit: int | None) -> DatasetFile:
    out = DatasetFile()
    bad: list[str] = []
    seen_q: set[str] = set()
    for i, rec in enumerate(records):
        if limit is not None and len(out.questions) >= limit:
            break
        try:
            q, docs, titles, title_only = _record(rec, i, source)
        except ValueError as e:
            bad.append(str(e))
            continue
        if q.qid in seen_q:
            continue
        seen_q.add(q.qid)
        out.questions.append(q)
        out.documents.extend(docs)
        out.question_titles |= titles
        out.title_only |= title_only
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
    return (
        bool(value)
        and all(k.strip().lstrip("-").isdigit() for k in value)
        and all(isinstance(v, list) and all(isinstance(t, list) for t in v) for v in value.values())
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
        if "question" in value or "question_text" in value:
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
        if any("question" in r or "question_text" in r for r in dicts[:50]):
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
