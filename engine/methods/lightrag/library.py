"""The one way into the `lightrag-hku` library (pinned in requirements.txt), made safe to import.

`import_lightrag()` returns the library's modules after three guards, each for a habit of the
library that the house rules forbid:

* **no installs at run time**: LightRAG ships `pipmaster`, and several of its optional modules run
  `pm.install(...)` when they are imported. Before the library is imported, every pipmaster
  package manager's command runner is replaced by one that refuses (`InstallRefused`, naming the
  package and requirements.txt), so an install attempt is an error, never a `pip install`. The
  refusals are counted in `BLOCKED` (the tests read it).
* **no `.env` read**: a dozen LightRAG modules call `load_dotenv(".env")` when imported (some lazily,
  when a storage is built), which would copy whatever `.env` sits in the current folder (API keys
  included) into the environment. `dotenv.load_dotenv` is wrapped first: called from inside the
  `lightrag` package it does nothing; any other caller gets the real function.
* **no network for the tokenizer**: LightRAG's default tokenizer is tiktoken's `o200k_base`, which
  tiktoken downloads on first use. `cl100k_tokenizer()` builds `cl100k_base` from the copy litellm
  ships inside its package (read as a file, hash checked), with nothing written and nothing fetched.

The library's loggers (its own and nano-vectordb's) are set to WARNING: they log every storage load
at INFO on stderr.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import logging
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

#: The exact version requirements.txt pins; another version is refused with a clear message
#: (its storage layout and query internals are what this package was written against).
PINNED_VERSION = "1.5.7"

#: Install attempts the guard refused in this process (package command lines), oldest first.
BLOCKED: list[str] = []

_lock = threading.Lock()
_modules: dict[str, ModuleType] = {}


class InstallRefused(RuntimeError):
    """LightRAG (through pipmaster) tried to install a package while the app runs."""


class LibraryMissing(RuntimeError):
    """`lightrag-hku` is not installed (or not the pinned version)."""


def _refuse(self: Any, command: Any, *args: Any, **kwargs: Any) -> Any:
    shown = " ".join(str(c) for c in command) if isinstance(command, (list, tuple)) else str(command)
    BLOCKED.append(shown)
    raise InstallRefused(
        f"LightRAG tried to run a package command at run time ({shown!r}); Triplet Lens never installs "
        "packages while it runs: install the pinned versions with `pip install -r requirements.txt`"
    )


async def _refuse_async(self: Any, command: Any, *args: Any, **kwargs: Any) -> Any:
    return _refuse(self, command)


def block_pipmaster() -> None:
    """Replace the command runner of every pipmaster package manager (pip, uv, conda, async) with
    one that refuses. Idempotent; a missing pipmaster (nothing can install then) is fine."""
    try:
        import pipmaster
        from pipmaster import async_package_manager, backends, core
    except ImportError:
        return
    for cls in (core.PackageManager, backends.UvPackageManager, backends.CondaPackageManager):
        cls._run_command = _refuse  # type: ignore[method-assign]
    async_package_manager.AsyncPackageManager._run_command = _refuse_async  # type: ignore[method-assign]
    pipmaster._triplet_lens_blocked = True  # type: ignore[attr-defined]


def block_dotenv() -> None:
    """`dotenv.load_dotenv` answers a caller inside the `lightrag` package with a no-op (its modules
    call it when imported, some of them lazily, at a storage's construction); anyone else gets the
    real function. Idempotent."""
    import dotenv

    if getattr(dotenv.load_dotenv, "_triplet_lens_guard", False):
        return
    real = dotenv.load_dotenv

    def load_dotenv(*args: Any, **kwargs: Any) -> bool:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller == "lightrag" or caller.startswith("lightrag."):
            return False
        return real(*args, **kwargs)

    load_dotenv._triplet_lens_guard = True  # type: ignore[attr-defined]
    dotenv.load_dotenv = load_dotenv


def import_lightrag() -> dict[str, ModuleType]:
    """{"lightrag": the package, "core": lightrag.lightrag, "operate": lightrag.operate, "utils":
    lightrag.utils, "base": lightrag.base, "constants": lightrag.constants}, imported once with the
    guards above."""
    with _lock:
        if _modules:
            return _modules
        block_pipmaster()
        try:
            from importlib.metadata import PackageNotFoundError, version

            found = version("lightrag-hku")
        except PackageNotFoundError:
            raise LibraryMissing(
                "the LightRAG method needs the `lightrag-hku` package: `pip install -r requirements.txt` "
                f"(it pins lightrag-hku=={PINNED_VERSION})"
            ) from None
        if found != PINNED_VERSION:
            raise LibraryMissing(
                f"the LightRAG method is written for lightrag-hku=={PINNED_VERSION}, found {found}: "
                "`pip install -r requirements.txt`"
            )
        block_dotenv()
        import lightrag
        from lightrag import base, constants, operate, utils
        from lightrag import lightrag as core

        for name in ("lightrag", "nano-vectordb"):
            logging.getLogger(name).setLevel(logging.WARNING)
        _modules.update(lightrag=lightrag, core=core, operate=operate, utils=utils, base=base, constants=constants)
        return _modules


# --- the tokenizer --------------------------------------------------------------------------

#: tiktoken's cl100k_base: where tiktoken would download it (litellm's bundled copy is named by the
#: SHA-1 of this address), its SHA-256, its split pattern and special tokens, as
#: tiktoken_ext.openai_public.cl100k_base defines them.
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def bundled_cl100k_file() -> Path:
    """litellm's copy of cl100k_base (litellm/litellm_core_utils/tokenizers/<sha1 of the URL>),
    found without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise LibraryMissing("litellm is not installed: it ships the tokenizer file LightRAG counts tokens with")
    root = Path(next(iter(spec.submodule_search_locations)))
    return root / "litellm_core_utils" / "tokenizers" / hashlib.sha1(CL100K_URL.encode()).hexdigest()


class _Shared:
    """The encoding behind LightRAG's `Tokenizer`. tiktoken encodings are safe across threads;
    LightRAG deep-copies its configuration at every query, and a copy of an encoding tiktoken did
    not register rebuilds its 100k-token table, so copies share this one."""

    def __init__(self, encoding: Any):
        self.encoding = encoding

    def encode(self, content: str, **kwargs: Any) -> list[int]:
        return self.encoding.encode(content, **kwargs)

    def decode(self, tokens: list[int]) -> str:
        return self.encoding.decode(tokens)

    def __deepcopy__(self, memo: dict) -> _Shared:
        return self


_tokenizer: Any = None


def cl100k_tokenizer() -> Any:
    """A `lightrag.utils.Tokenizer` over tiktoken's cl100k_base, read from litellm's bundled file
    (the hash is checked: a damaged file is an error, never a download)."""
    global _tokenizer
    with _lock:
        if _tokenizer is not None:
            return _tokenizer
    import tiktoken

    path = bundled_cl100k_file()
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise LibraryMissing(f"the bundled tokenizer file {path} does not match cl100k_base's hash")
    ranks = {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in data.splitlines() if line)}
    encoding = tiktoken.Encoding(
        name="cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL
    )
    utils = import_lightrag()["utils"]
    tok = utils.Tokenizer("cl100k_base", _Shared(encoding))
    with _lock:
        _tokenizer = _tokenizer or tok
        return _tokenizer
