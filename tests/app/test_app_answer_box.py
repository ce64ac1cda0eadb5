"""The answer box's colour follows the verdict against gold, and it is neutral without gold."""

from __future__ import annotations

from dataclasses import dataclass

from components.widgets.answer_box import answer_box_html, verdict


@dataclass
class _R:
    answer: str
    error: str = ""
    method: str = "t2rag"


def test_the_verdict_follows_the_gold_answer():
    assert verdict(_R("Lisbon"), ["Lisbon"]).kind == "correct"
    assert verdict(_R("the city of Lisbon, Portugal"), ["Lisbon"]).kind == "partial"
    assert verdict(_R("Madrid"), ["Lisbon"]).kind == "wrong"
    assert verdict(_R(""), ["Lisbon"]).kind == "wrong"  # an empty answer is not right
    assert verdict(_R("Madrid"), []).kind == "unknown"  # no gold: no claim either way
    assert verdict(_R("", error="timed out"), ["Lisbon"]).kind == "error"


def test_the_box_is_green_only_when_right_and_escapes_everything():
    ok = answer_box_html(_R("Lisbon"), ["Lisbon"])
    bad = answer_box_html(_R("<img src=x onerror=alert(1)>"), ["Lisbon"])
    err = answer_box_html(_R("", error="provider said <b>no</b>"), ["Lisbon"])
    assert "tl-answer-correct" in ok and "✅" in ok and "Gold: Lisbon" in ok
    assert "tl-answer-wrong" in bad and "<img" not in bad and "&lt;img" in bad
    assert "tl-answer-error" in err and "could not finish" in err and "<b>no" not in err
    assert "tl-answer-unknown" in answer_box_html(_R("Lisbon"), None)


def test_the_evidence_chain_comes_from_the_trace_and_stays_text():
    from types import SimpleNamespace as NS

    from components.widgets.evidence_chain import chain_html

    xss = "<img src=x onerror=alert(1)>"
    binding = NS(
        placeholder="?city",
        value="Lisbon",
        proposition=f"{xss} was born in Lisbon",
        chunk_ids=["d1#0"],
        applied_to=["t1"],
        source_kind="proposition",
    )
    chunk = NS(chunk_id="d1#0", title=f"Poem {xss}", text=f"A poem. The poet {xss} was born in Lisbon. Later more.")
    trace = NS(rounds=[NS(bindings=[binding], chunks=[chunk])])
    result = NS(method="t2rag", trace=trace, answer="Lisbon", evidence_chunk_ids=["d1#0"])
    html = chain_html(result)
    assert "[1]</b> ?city = Lisbon" in html and "was born in Lisbon" in html
    assert "Poem &lt;img" in html and "chunk 1" in html  # the chunk by title + number
    # the sentence holding the value is the marked span, not the whole chunk
    assert "<mark>The poet &lt;img src=x onerror=alert(1)&gt; was born in Lisbon.</mark>" in html
    assert "<img" not in html
