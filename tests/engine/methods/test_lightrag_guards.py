"""The LightRAG library never installs a package, reads a `.env` or reaches the network while
Triplet Lens runs it (engine/methods/lightrag/library.py). Checked in a fresh interpreter, where the
library is imported for the first time: its import, a storage build and a question in every mode,
with pipmaster's install functions recording any call, every socket connection refused and a
`.env` carrying a canary in the working folder. The control at the end shows the recorder and the
refusal work: an install asked for afterwards is recorded and refused, and runs no pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.timeout(300)

SCRIPT = textwrap.dedent(
    """
    import json, os, socket, subprocess, sys

    def no_network(*args, **kwargs):
        raise OSError("network refused by the test")

    socket.socket.connect = no_network
    socket.create_connection = no_network
    ran = []
    real_run = subprocess.run
    subprocess.run = lambda *a, **k: ran.append(a) or real_run(["true"])

    import pipmaster
    from pipmaster import core

    installs = []
    real_install = core.PackageManager.install

    def recording_install(self, package, *args, **kwargs):
        installs.append(package)
        return real_install(self, package, *args, **kwargs)

    core.PackageManager.install = recording_install

    from engine.methods.lightrag import LightRAG, LightRAGSettings
    from engine.methods.lightrag.library import BLOCKED, InstallRefused, cl100k_tokenizer
    from engine.reasoners.offline import OfflineReasoner
    from tests._fake_embedder import HashEmbedder
    from tests.doubles import MemoryCorpus, chunk

    corpus = MemoryCorpus(
        HashEmbedder(),
        [chunk("a#0", "Orla Vennick", "Orla Vennick was born in Tarnholm."),
         chunk("b#0", "Tarnholm", "The mayor of Tarnholm is Asger Brill.")],
        [("Orla Vennick", "born in", "Tarnholm", ("a#0",)), ("Tarnholm", "mayor", "Asger Brill", ("b#0",))],
    )
    method = LightRAG(OfflineReasoner())
    answers = {m: method.answer("Where was Orla Vennick born?", corpus, LightRAGSettings(mode=m)).answer
               for m in ("local", "global", "hybrid", "mix")}
    out = {
        "answers": answers,
        "installs": list(installs),
        "blocked": list(BLOCKED),
        "subprocesses": len(ran),
        "dotenv_leaked": "TRIPLET_LENS_DOTENV_CANARY" in os.environ,
        "hello": cl100k_tokenizer().encode("Hello world"),
    }
    try:  # the control: an install asked for now is recorded, refused, and runs no pip
        pipmaster.install("left-pad")
        out["control"] = "installed"
    except InstallRefused as exc:
        out["control"] = str(exc)
    out["control_installs"] = list(installs)
    out["control_subprocesses"] = len(ran)
    print("RESULT " + json.dumps(out))
    """
)


def test_no_install_no_dotenv_no_network_while_lightrag_runs(tmp_path):
    (tmp_path / ".env").write_text("TRIPLET_LENS_DOTENV_CANARY=leaked\nOPENAI_API_KEY=sk-from-dotenv-000000\n")
    env = {k: v for k, v in os.environ.items() if k not in ("TRIPLET_LENS_DOTENV_CANARY", "OPENAI_API_KEY")}
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("TIKTOKEN_CACHE_DIR", None)  # the tokenizer must not depend on litellm having set it
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, done.stderr[-3000:]
    out = json.loads(line[len("RESULT ") :])
    assert out["answers"] == {m: "Tarnholm" for m in ("local", "global", "hybrid", "mix")}
    assert out["installs"] == [] and out["blocked"] == [] and out["subprocesses"] == 0
    assert out["dotenv_leaked"] is False
    assert out["hello"] == [9906, 1917]  # cl100k_base, read from litellm's bundled file
    # the control: the recorder sees an install, the guard refuses it, no pip ran
    assert out["control_installs"] == ["left-pad"] and "never installs packages" in out["control"]
    assert out["control_subprocesses"] == 0
