"""Guarantee 6, secrets: an API key given by environment or passed at run time never appears in a
trace, an export, the response cache, the corpus database, a log line or an exception message,
even when the provider echoes the key back in an error.

Each test runs a whole flow with the workspace and every output in tmp dirs, captures all
logging at DEBUG (litellm's, openai's and httpx's loggers included) and the process's stdout and
stderr at the file-descriptor level, then searches every byte written, SQLite files and their
write-ahead logs included, for the key.
"""

from __future__ import annotations

import logging
import traceback
import uuid
from pathlib import Path

import pytest

from engine.cli import main
from tests.conftest import SHARED_DATA
from tests.loopback import LoopbackServer
from tests.reliability.test_reliability_faults import scripted_provider

HOTPOT = SHARED_DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json"
MODEL = "openai/gpt-4o-mini"
THIRD_PARTY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "openai", "httpx", "httpcore")


def new_key(tag: str) -> tuple[str, str]:
    core = uuid.uuid4().hex
    return f"sk-test-SECRET-{tag}-{core}", core


def leaks(roots: list[Path], texts: list[str], key: str, core: str) -> list[str]:
    """Where the key (or its random core, in case something masks only the prefix) shows up."""
    found = []
    needles = [key.encode(), core.encode(), key.encode("utf-16-le"), core.encode("utf-16-le")]
    n_files = 0
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            n_files += 1
            data = path.read_bytes()
            if any(n in data for n in needles):
                found.append(str(path))
    for i, text in enumerate(texts):
        if key in text or core in text:
            found.append(f"captured output #{i}: ...{text[max(0, text.find(core) - 300) : text.find(core) + 60]}")
    assert n_files > 0
    return found


class _LiveStderr:
    """Whatever sys.stderr is at the moment of writing (pytest swaps it between phases)."""

    def write(self, text: str) -> int:
        import sys

        return sys.stderr.write(text)

    def flush(self) -> None:
        import sys

        sys.stderr.flush()


@pytest.fixture()
def debug_logs(caplog, capfd, monkeypatch):
    """Every logger at DEBUG; litellm's own console handler writes into this test's stderr.

    litellm binds its StreamHandler to whatever sys.stderr was when it was first imported; under
    pytest that is a capture file closed at the end of that phase. Writing there fails, and
    Python's logging then prints "--- Logging error ---" with the exception being handled, i.e.
    the provider's raw error, to stderr. Pointing the handler at the live stderr keeps this test
    about what litellm logs, not about a stale stream (see docs/reliability-engine-notes.md).
    """

    from engine.llm.litellm_client import import_litellm

    import_litellm()
    from litellm._logging import handler

    old, handler.stream = handler.stream, _LiveStderr()  # no flush of a possibly closed old stream
    # Another test's handler left on a closed stream would make logging dump the exception in
    # flight ("--- Logging error ---"); that dump is not a log line, and not what is tested here.
    monkeypatch.setattr(logging, "raiseExceptions", False)
    caplog.set_level(logging.DEBUG)
    for name in THIRD_PARTY_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    yield caplog
    handler.stream = old


def test_key_from_the_environment_never_reaches_disk_logs_or_messages(
    tmp_path, monkeypatch, capfd, debug_logs, embedder
):
    key, core = new_key("env")
    ws, out = tmp_path / "ws", tmp_path / "out"
    out.mkdir()
    with LoopbackServer() as srv:
        srv.reply = scripted_provider
        monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(ws))
        monkeypatch.setenv("TRIPLET_LENS_MODEL", MODEL)
        monkeypatch.setenv("TRIPLET_LENS_API_BASE", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        codes = {}
        codes["create"] = main(["corpus", "create", "hp", "--from", str(HOTPOT), "--limit-questions", "3"])
        # the provider echoes the key in the error of the 2nd extraction request
        srv.faults.extend(["", "echo_key"])
        codes["extract"] = main(["extract", "hp", "--concurrency", "1"])
        codes["extract-retry"] = main(["extract", "hp"])  # the failed chunk again
        question = "Which city was the birthplace of the director of Blade Runner?"
        for method in ("t2rag", "kg2rag", "standard"):
            srv.faults.extend(["echo_key"])  # every method's first call gets the echoing error
            codes[method] = main(
                ["ask", "hp", question, "--method", method, "--trace-out", str(out / f"{method}.json")]
            )
        srv.faults.extend(["", "echo_key", "", "", "echo_key"])
        codes["eval"] = main(["eval", "hp", "--methods", "standard,t2rag", "--out", str(out / "eval")])
        codes["export"] = main(["triplets", "export", "hp", str(out / "triplets.jsonl")])
        codes["export-csv"] = main(["triplets", "export", "hp", str(out / "triplets.csv")])
        sent = srv.headers
    assert codes["create"] == 0 and codes["export"] == 0 and codes["eval"] == 0
    assert codes["extract"] == 1 and codes["extract-retry"] == 0  # one chunk failed, then succeeded
    # the key was used (the provider got it) and the echo really happened
    assert any(h.get("authorization") == f"Bearer {key}" for h in sent)
    captured = capfd.readouterr()
    assert "Bad request with header Authorization" in captured.out + captured.err + debug_logs.text

    _app_export(out)
    texts = [captured.out, captured.err, debug_logs.text, "\n".join(r.getMessage() for r in debug_logs.records)]
    found = leaks([ws, out], texts, key, core)
    assert not found, "the key leaked into:\n" + "\n".join(found)


def _app_export(out: Path) -> None:
    """The app's HTML export of a comparison run and a saved run file, written beside the traces."""
    from components.report.export import export_html
    from engine.methods import load_result
    from engine.runs import Run, run_to_json

    results = [load_result(out / f"{m}.json") for m in ("t2rag", "kg2rag", "standard")]
    run = Run(question=results[0].question, results=results, gold=["x"], corpus="hp")
    html = export_html(run)
    assert "Bad request" in html  # the error (scrubbed) is shown in the export
    (out / "run.html").write_text(html, encoding="utf-8")
    (out / "run.json").write_text(run_to_json(run), encoding="utf-8")


def test_key_passed_at_run_time_never_reaches_disk_logs_or_messages(tmp_path, monkeypatch, capfd, debug_logs, embedder):
    from engine.eval.harness import run_eval
    from engine.llm import LLMError
    from engine.methods import build_method, save_result
    from engine.reasoners import make_reasoner
    from engine.store import Workspace
    from engine.triplets.extraction import run_extraction
    from tests._eval_helpers import make_hotpot_corpus

    key, core = new_key("arg")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ws_root, out = tmp_path / "ws", tmp_path / "out"
    corpus = make_hotpot_corpus(Workspace(ws_root, embedder=embedder), n=2, name="hp")
    messages: list[str] = []
    with LoopbackServer() as srv:
        srv.reply = scripted_provider
        reasoner = make_reasoner(
            MODEL, api_base=srv.base_url, api_key=key, cache_path=ws_root / "llm_cache.sqlite", backoff=0.01
        )
        messages += [repr(reasoner), repr(reasoner.llm), str(vars(reasoner.llm).get("cache"))]
        srv.faults.extend(["", "", "echo_key"])
        summary = run_extraction(corpus, reasoner, concurrency=1)
        assert summary.chunks_failed == 1
        messages += [e for _, e in summary.failures]
        run_extraction(corpus, reasoner, concurrency=2, retry_failed=False)  # the failed chunk keeps its error
        for name in ("t2rag", "kg2rag", "standard"):
            srv.faults.append("echo_key")
            result = build_method(name, reasoner).answer("Who directed Blade Runner?", corpus)
            save_result(result, out / f"{name}.json")
        srv.faults.extend(["echo_key", "", "echo_key"])
        run_eval(corpus, ["t2rag", "standard"], reasoner, out_dir=out / "eval", concurrency=2)
        # the exception a caller would print, log or show in the app
        srv.faults.append("echo_key")
        with pytest.raises(LLMError) as info:
            reasoner.llm.complete([{"role": "user", "content": "fresh prompt, not cached"}])
        exc = info.value
        messages += [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
        logging.getLogger("test").exception("logged with traceback", exc_info=exc)
        # a bad key: the auth error message, which names the env variable, not the key
        srv.faults.append("401")
        with pytest.raises(LLMError, match="authentication failed") as auth:
            reasoner.llm.complete([{"role": "user", "content": "another fresh prompt"}])
        messages += [str(auth.value), "".join(traceback.format_exception(auth.value))]
        sent = srv.headers
    corpus.close() if hasattr(corpus, "close") else None
    assert any(h.get("authorization") == f"Bearer {key}" for h in sent)
    captured = capfd.readouterr()
    texts = [captured.out, captured.err, debug_logs.text, *messages]
    assert (ws_root / "llm_cache.sqlite").exists()
    found = leaks([ws_root, out], texts, key, core)
    assert not found, "the key leaked into:\n" + "\n".join(found)
    assert "Bad request with header Authorization: Bearer ***" in str(exc)  # scrubbed, still readable
