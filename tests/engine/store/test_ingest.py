"""Ingestion: every supported format from real files, and every kind of bad input a user can drop.

Data under tests/fixtures/qa (copied with attribution): HotpotQA (CC BY-SA 4.0), MuSiQue (CC BY 4.0),
2WikiMultihopQA (Apache-2.0).
"""

from __future__ import annotations

import codecs
import json
import time
from pathlib import Path

from engine.core.chunking import ChunkingSettings, chunk_document
from engine.ingest import DATASET_ATTRIBUTION, load_bytes, load_paths, load_uploads, safe_name

FIX = Path(__file__).parents[2] / "fixtures" / "ingest"
MB = 1024 * 1024
BIG = 100 * MB


def _only_error(batch) -> str:
    assert not batch.documents and not batch.questions
    assert len(batch.errors) == 1
    return batch.errors[0][1]


# --- real datasets ----------------------------------------------------------------------------


def test_hotpotqa_records_give_sentence_documents_and_gold_support(shared_data):
    batch = load_paths([shared_data / "hotpotqa_hipporag_train100" / "hotpotqa_train.json"], BIG, limit_questions=5)
    assert batch.errors == []
    assert len(batch.questions) == 5
    q = batch.questions[0]
    assert q.question == "If Gallu is a demon Lilu is what?" and q.answer == "a spirit"
    assert q.dataset == "hotpotqa" and q.qtype in ("bridge", "comparison")
    assert q.supporting_titles == ("Alû", "Lilu (mythology)")
    docs = {d.title: d for d in batch.documents}
    assert 40 <= len(batch.documents) <= 50 and all(d.kind == "hotpotqa" for d in batch.documents)
    for q in batch.questions:  # every gold fact points at a real sentence of a loaded document
        for title, sent_id in q.supporting_facts:
            assert sent_id < len(docs[title].sentences)
    assert not docs["Demon Dice"].sentences[1].startswith(" ")  # HotpotQA's leading spaces stripped
    assert batch.datasets == ["hotpotqa"] and "CC BY-SA 4.0" in DATASET_ATTRIBUTION["hotpotqa"]


def test_musique_records_keep_aliases_supporting_paragraphs_and_hop_type(shared_data):
    batch = load_paths([shared_data / "musique_kag_100" / "musique_qa_100.json"], BIG, limit_questions=5)
    assert batch.errors == [] and len(batch.questions) == 5
    q = batch.questions[0]
    assert q.qid == "2hop__82713_84616" and q.qtype == "2hop" and q.dataset == "musique"
    assert q.answers[0] == "for Best Performance by a Leading Actress in a Play in Ondine"
    assert "leading actress" in q.answers  # answer_aliases
    assert q.supporting_titles == ("My Fair Lady (film)", "List of awards and honours received by Audrey Hepburn")
    assert q.supporting_facts == ()
    assert all(d.kind == "musique" and d.sentences is None for d in batch.documents)
    assert len(batch.documents) <= 5 * 20
    titles = {d.title for d in batch.documents}
    assert all(t in titles for q in batch.questions for t in q.supporting_titles)


def test_hoprag_quickstart_jsonl_files_in_all_three_formats(shared_data):
    folder = shared_data / "hoprag_quickstart"
    batch = load_paths(
        [folder / "wiki_example.jsonl", folder / "hotpot_example.jsonl", folder / "musique_example.jsonl"],
        BIG,
        limit_questions=5,
    )
    assert batch.errors == []
    by_ds = {}
    for q in batch.questions:
        by_ds.setdefault(q.dataset, []).append(q)
    assert {k: len(v) for k, v in by_ds.items()} == {"2wiki": 5, "hotpotqa": 5, "musique": 5}
    wiki = by_ds["2wiki"][0]
    assert wiki.qtype == "comparison" and wiki.answer == "Come With Me (Pure Imagination)"
    assert wiki.supporting_facts == (("Come with Me (Pure Imagination)", 1), ("Hold on Me (Grinspoon song)", 1))
    wiki_docs = {d.title: d for d in batch.documents if d.kind == "2wiki"}
    # 2Wiki sentences have no leading space; the joined text must not glue them together
    assert 'Pills". It was released' in wiki_docs["Hold on Me (Grinspoon song)"].text
    assert batch.datasets == ["2wiki", "hotpotqa", "musique"]


def test_hipporag_corpus_dict_dedupes_with_the_question_file(shared_data):
    folder = shared_data / "hotpotqa_hipporag_train100"
    corpus = load_paths([folder / "hotpotqa_train_corpus.json"], BIG)
    assert len(corpus.documents) == 994 and not corpus.questions
    both = load_paths([folder / "hotpotqa_train.json", folder / "hotpotqa_train_corpus.json"], BIG)
    assert len(both.questions) == 100
    assert len(both.documents) == 994  # same title + text -> same doc_id -> loaded once


def test_limit_questions_takes_only_their_paragraphs_from_a_corpus_file(shared_data, tmp_path):
    """HippoRAG / T2RAG benchmark layout: corpus.json [{title, text}] + questions with answer lists."""
    records = json.loads((shared_data / "musique_kag_100" / "musique_qa_100.json").read_text())[:6]
    corpus = [{"title": p["title"], "text": p["paragraph_text"]} for r in records for p in r["paragraphs"]]
    questions = [
        {
            "id": r["id"],
            "question": r["question"],
            "answer": [r["answer"], *r["answer_aliases"]],
            "paragraphs": [
                {"title": p["title"], "paragraph_text": p["paragraph_text"], "is_supporting": p["is_supporting"]}
                for p in r["paragraphs"]
            ],
        }
        for r in records
    ]
    gold_only = [
        {
            "_id": "g1",
            "question": records[0]["question"],
            "answer": records[0]["answer"],
            "supporting_facts": [[t, 0] for t in ("My Fair Lady (film)",)],
        }
    ]
    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    (tmp_path / "musique.json").write_text(json.dumps(questions))
    (tmp_path / "gold_only.json").write_text(json.dumps(gold_only))
    full = load_paths([tmp_path / "corpus.json", tmp_path / "musique.json"], BIG)
    assert len(full.questions) == 6 and full.errors == []
    assert len(full.documents) == len({(p["title"], p["text"]) for p in corpus})
    assert full.questions[0].answers[1:] == tuple(records[0]["answer_aliases"])

    (tmp_path / "bare.json").write_text(json.dumps([{"id": "b1", "question": "Who?", "answer": ["x"]}]))
    bare = load_paths([tmp_path / "corpus.json", tmp_path / "bare.json"], BIG, limit_questions=1)
    assert len(bare.documents) == len(full.documents)  # nothing to select by: the corpus stays whole

    small = load_paths([tmp_path / "corpus.json", tmp_path / "gold_only.json"], BIG, limit_questions=1)
    assert [q.qid for q in small.questions] == ["g1"]
    assert {d.title for d in small.documents} == {"My Fair Lady (film)"}
    assert small.questions[0].supporting_facts == (("My Fair Lady (film)", 0),)


def test_text_markdown_html_and_pdf_documents():
    batch = load_paths([FIX / "turing.txt", FIX / "notes.md", FIX / "page.html", FIX / "text_layer.pdf"], MB)
    assert batch.errors == []
    docs = {d.kind: d for d in batch.documents}
    assert docs["text"].title == "turing" and "Dr. Turing died in 1954." in docs["text"].text
    md = docs["markdown"]
    assert md.title == "The Analytical Engine"
    assert "designed by Charles Babbage." in md.text
    for markup in ("**", "](", "```", "# ", "---", "![", "author:"):
        assert markup not in md.text
    html = docs["html"]
    assert html.title == "Grace Hopper & COBOL"
    assert "She helped create COBOL in 1959." in html.text
    for hidden in ("secret", "color: red", "Enable JavaScript", "template text", "document.write"):
        assert hidden not in html.text
    pdf = docs["pdf"]
    assert pdf.title == "Ada Lovelace notes" and "Charles Babbage" in pdf.text
    assert all(
        d.source == p for d, p in zip(batch.documents, ("turing.txt", "notes.md", "page.html", "text_layer.pdf"))
    )


def test_default_size_limit_lets_callers_omit_it(shared_data):
    batch = load_paths([shared_data / "hoprag_quickstart" / "wiki_example.jsonl"])
    assert len(batch.questions) == 10 and batch.errors == []


def test_html_line_breaks_and_self_closed_scripts():
    page = b"<title>T</title><script src='a.js'/><p>One<br>two<br/>three.</p><script/><p>Still visible.</p>"
    doc = load_bytes("p.html", page, MB).documents[0]
    assert doc.text == "One\ntwo\nthree.\n\nStill visible."


def test_popqa_style_answer_list_stored_as_a_string():
    data = json.dumps([{"id": 7, "question": "Who wrote it?", "possible_answers": '["Ann Lee", "A. Lee"]'}])
    q = load_bytes("popqa.json", data.encode(), MB).questions[0]
    assert q.qid == "7" and q.answers == ("Ann Lee", "A. Lee")


def test_upload_names_never_carry_paths_and_directories_are_walked(tmp_path):
    batch = load_bytes("../../etc/secret notes.txt", b"Plain words in an upload.", MB)
    assert batch.documents[0].source == "secret notes.txt" and batch.documents[0].title == "secret notes"
    assert load_bytes("C:\\Users\\x\\report.md", b"# Report\n\nBody text.", MB).documents[0].source == "report.md"
    assert safe_name("..") == "upload" and safe_name("a/b/\x00c.txt") == "c.txt"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("First file.")
    (tmp_path / "b.md").write_text("Second file.")
    assert sorted(d.text for d in load_paths([tmp_path], MB).documents) == ["First file.", "Second file."]


# --- bad input --------------------------------------------------------------------------------


def test_each_bad_file_gets_a_named_error_and_the_batch_still_loads(tmp_path):
    files = {
        "empty.txt": b"",
        "binary.txt": b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)),
        "latin1.txt": "Caf\u00e9 cr\u00e8me".encode("latin-1"),
        "truncated.json": b'[{"question": "Who?", "answer": "x", "context": [["T", ["S."]]',
        "malformed.json": b'{"question": "Who?",\n "answer": }',
        "deep.json": b"[" * 200_000 + b"]" * 200_000,
        "nan.json": b"NaN",
        "word.docx": b"PK\x03\x04" + b"\x00" * 100,
        "whitespace.txt": b" \n\t\n ",
        "broken.pdf": b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
        "good.txt": b"This file is fine. It loads.",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    batch = load_paths([tmp_path / n for n in files] + [tmp_path / "missing.txt"], MB)
    assert [d.source for d in batch.documents] == ["good.txt"]
    errors = {Path(p).name: msg for p, msg in batch.errors}
    assert set(errors) == set(files) - {"good.txt"} | {"missing.txt"}
    for name, msg in errors.items():
        assert name in msg  # every message names its file
    assert "is empty" in errors["empty.txt"]
    assert "binary" in errors["binary.txt"]
    assert "not valid UTF-8" in errors["latin1.txt"] and "byte offset 3" in errors["latin1.txt"]
    assert "line 1, column" in errors["truncated.json"] and "truncated" in errors["truncated.json"]
    assert "line 2, column" in errors["malformed.json"]
    assert "nested too deeply" in errors["deep.json"]
    assert "NaN" in errors["nan.json"]
    assert "unsupported file type '.docx'" in errors["word.docx"]
    assert "no readable text" in errors["whitespace.txt"]
    assert "not a readable PDF" in errors["broken.pdf"]
    assert "not found" in errors["missing.txt"]


def test_scanned_pdf_is_reported_as_having_no_text_layer():
    msg = _only_error(load_paths([FIX / "scanned.pdf"], MB))
    assert "scanned.pdf has no text layer (scanned?)" in msg


def test_oversize_file_is_refused_before_it_is_read(tmp_path):
    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as fh:  # sparse 4 GB file: reading it would take far longer than the limit
        fh.truncate(4 * 1024 * MB)
    start = time.perf_counter()
    msg = _only_error(load_paths([huge], 10 * MB))
    assert time.perf_counter() - start < 1
    assert "4096.0 MB, over the 10.0 MB limit" in msg
    assert "over the" in _only_error(load_bytes("big.txt", b"x" * 2000, 1000))


def test_utf16_and_utf8_bom_files_decode(tmp_path):
    (tmp_path / "u16.txt").write_bytes("Zoë Saldaña starred in Avatar.".encode("utf-16"))
    (tmp_path / "bom.txt").write_bytes(codecs.BOM_UTF8 + "Naïve café text.".encode())
    batch = load_paths([tmp_path / "u16.txt", tmp_path / "bom.txt"], MB)
    assert batch.errors == []
    assert [d.text for d in batch.documents] == ["Zoë Saldaña starred in Avatar.", "Naïve café text."]


def test_ten_megabyte_single_line_loads_and_chunks(tmp_path):
    big = tmp_path / "one_line.txt"
    big.write_bytes(b"word " * (2 * MB))
    start = time.perf_counter()
    batch = load_paths([big], 20 * MB)
    chunks = chunk_document(batch.documents[0], ChunkingSettings())
    assert time.perf_counter() - start < 30
    assert batch.errors == [] and len(chunks) > 1000


def test_hostile_markdown_and_html_are_read_in_linear_time():
    line = "[a *b __c ~~d <e `f | " * 800  # unclosed markup of every kind, 17 KB per line
    start = time.perf_counter()
    md = load_bytes("hostile.md", ("\n".join([line] * 40)).encode(), 10 * MB)
    html = load_bytes("hostile.html", ("<div><p>x <b>y" * 30_000).encode(), 10 * MB)
    assert time.perf_counter() - start < 30
    assert md.errors == [] and html.errors == []
    assert "x y" in html.documents[0].text


def test_triplet_file_dropped_into_ingest_points_to_the_importer():
    msg = _only_error(load_paths([FIX / "openie_sample.json"], MB))
    assert "import it as triplets" in msg


def test_truncated_jsonl_keeps_the_complete_records(shared_data):
    lines = (shared_data / "hoprag_quickstart" / "hotpot_example.jsonl").read_bytes().splitlines()[:3]
    data = b"\n".join(lines[:2] + [lines[2][:500]])
    batch = load_uploads([("hotpot.jsonl", data)], BIG)
    assert len(batch.questions) == 2
    assert len(batch.errors) == 1 and "line 3 is not valid JSON" in batch.errors[0][1]


def test_records_without_questions_are_skipped_with_a_count():
    data = json.dumps(
        [{"question": "Who?", "answer": "A", "context": [["T", ["T is a thing."]]]}, {"question": "", "answer": "B"}, 7]
    ).encode()
    batch = load_bytes("qa.json", data, MB)
    assert len(batch.questions) == 1 and len(batch.documents) == 1
    assert "skipped 2 record(s)" in batch.errors[0][1]
