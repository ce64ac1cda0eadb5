"""What the command line prints never drives the terminal (issue 38, break 5): a file named
`\\x1b]0;TITLE\\x07\\x1b[2J...` set the window title and cleared the screen from the "skipped"
line, and a newline in a title split `corpus show --documents` into false rows. Every name, title,
path and reply the CLI prints goes through `engine.core.terminal.shown`, which writes control
characters visibly."""

from __future__ import annotations

import re

import pytest

from engine.cli import main
from engine.core.terminal import shown
from engine.core.types import Document
from engine.store import Workspace

HOSTILE = "\x1b]0;TITLE\x07\x1b[2J"
#: what a terminal would act on: C0 controls but the line ends print() itself writes, DEL, C1
_RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture()
def ws(tmp_path, monkeypatch, embedder):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(tmp_path / "ws"))
    ws = Workspace(tmp_path / "ws", embedder=embedder)
    ws.create("demo").add_documents([Document("d0", "Plain", "Paris is the capital of France.", "p.txt")])
    return ws


def _run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_shown_writes_every_control_character_visibly():
    assert shown(f"a{HOSTILE}b\nc\td\x9be\u202ef") == "a\\x1b]0;TITLE\\x07\\x1b[2Jb\\nc\\td\\x9be\\u202ef"
    assert shown("Café – 東京 \\x1b") == "Café – 東京 \\x1b"  # printable text and backslashes unchanged


def test_a_file_named_with_escape_codes_is_shown_not_obeyed(ws, tmp_path, capsys):
    folder = tmp_path / "files"
    folder.mkdir()
    bad = folder / f"{HOSTILE}empty.md"
    bad.write_text("")  # empty: rejected, and named in the "skipped" line
    code, text = _run(capsys, "corpus", "add", "demo", str(bad))
    assert code == 2
    assert not _RAW.search(text), text
    assert "\\x1b]0;TITLE\\x07\\x1b[2Jempty.md" in text  # the user still sees which file it was


def test_a_title_with_a_newline_stays_on_its_row(ws, capsys):
    corpus = ws.open("demo")
    corpus.add_documents(
        [
            Document("d1", "First line\n  d9  FAKE ROW", "Berlin is the capital of Germany.", "b.txt"),
            Document("d2", f"Bell{HOSTILE}", "Rome is the capital of Italy.", "r.txt"),
        ]
    )
    code, text = _run(capsys, "corpus", "show", "demo", "--documents")
    assert code == 0
    assert not _RAW.search(text), text
    rows = [line for line in text.splitlines() if re.match(r"  d\d  ", line)]
    assert [r.split()[0] for r in rows] == ["d0", "d1", "d2"]  # one row per document, no false "d9" row
    assert "First line\\n  d9  FAKE ROW" in rows[1]


def test_an_error_naming_a_hostile_path_is_one_visible_line(ws, tmp_path, capsys):
    code, text = _run(capsys, "triplets", "import", "demo", str(tmp_path / f"no{HOSTILE}\nfile.csv"))
    assert code == 2
    assert not _RAW.search(text) and text.count("\n") == 1, text
