"""A visitor without a browser: a Streamlit session opened over the app's websocket the way a browser
opens one (bench/app_concurrency.py times them; tests ask the `make run` server through it)."""

from __future__ import annotations

import time
import urllib.parse


def _has_answer(msg) -> bool:
    el = msg.delta.new_element
    kind = el.WhichOneof("type")
    return kind in ("markdown", "html") and "tl-answer" in getattr(el, kind).body


def visit(port: int, page: str, query: dict[str, str], timeout: float = 300) -> float:
    """Seconds from opening a session on the page's link (`/page?query`; a `question` in it is asked
    at once) until a script run finished with an answer on the page."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect
    from websockets.typing import Subprotocol

    t0 = time.monotonic()
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    with connect(url, subprotocols=[Subprotocol("streamlit")], max_size=1 << 26, open_timeout=60) as ws:
        msg = BackMsg()
        msg.rerun_script.query_string = urllib.parse.urlencode(query)
        msg.rerun_script.page_name = page
        ws.send(msg.SerializeToString())
        answered = False
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(ws.recv(timeout=max(1.0, timeout - (time.monotonic() - t0))))
            kind = fwd.WhichOneof("type")
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                answered = answered or _has_answer(fwd)
            elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                if answered:
                    return time.monotonic() - t0
                # app.py reruns once when a link's state is restored: the answer comes in the next run
