"""Start the app the way `make run` and `python -m engine app` do: the server process begins warming
the embedding model and the default corpus's indexes (components/shell/warmup.py) and then runs
Streamlit in the same process, so the caches the pages use are filled before the first visitor; with
`TRIPLET_LENS_OFFLINE_WORKERS` set it starts that many worker processes for offline questions
(engine/session/offload.py).

    .venv/bin/python scripts/serve.py [streamlit run options, e.g. --server.port 8501]

The options are `streamlit run app.py`'s own. `streamlit run app.py` still works; its server warms
at the first page view instead.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from streamlit.web import cli as stcli

    from components.shell.warmup import start_at_server_start
    from engine.session import offload

    try:
        workers = offload.default_workers()
    except ValueError as exc:  # the operator's variable does not parse: say which, start nothing
        print(f"serve.py: {exc}", file=sys.stderr)
        return 2
    warm_log = logging.getLogger("components.shell.warmup")  # one line: what was warmed, how long it took
    warm_log.setLevel(logging.INFO)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s warm-up: %(message)s"))
    warm_log.addHandler(handler)
    start_at_server_start()
    # offline questions in worker processes (off unless the operator asks: a trade, see offload.py)
    offload.configure(workers)
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *(sys.argv[1:] if argv is None else argv)]
    return stcli.main()


if __name__ == "__main__":
    sys.exit(main())
