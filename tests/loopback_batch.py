"""A loopback server for the OpenAI-compatible batch API (files + batches), on top of `LoopbackServer`.

Serves, besides everything `LoopbackServer` does:

    POST /v1/files                     multipart upload (purpose, file) -> {"id": "file-..."}
    GET  /v1/files/{id}/content        the file's bytes (input, output and error files)
    POST /v1/batches                   {"input_file_id", "endpoint", "completion_window"} -> a batch
    GET  /v1/batches/{id}              the batch (its status moves on as described below)
    GET  /v1/batches                   the list, newest first (`limit`, `after`, `has_more`)

A batch answers each request line with the same scripted reply function the chat endpoint uses
(`srv.reply`), so extraction tests share their replies. It stays "in_progress" for `polls_before_done`
retrievals, then runs and ends in the state its mode says. Modes are taken from `batch_modes` (one
per batch, in creation order) and then `batch_mode`:

    "completed"  every request answered (output file)
    "failed"     the batch fails validation: no request runs, no output file
    "expired"    the 24 h window ran out: the first half answered, the rest in the error file
                 (code batch_expired)
    "partial"    completed, but every third request (index 1, 4, 7, ...) got a 500 (error file) whose
                 message is `error_text` (a test can make it echo a key, as a buggy provider might)

`faults` (shared with the chat endpoint) apply to batch creation too: "500", "429"... answer that
status without creating the batch; "created_500" creates it and still answers 500 (a reply lost
after the work was done: a client that simply retries makes a second batch and pays twice).

`billed` counts, per custom_id, the requests answered with a 200 (what a provider bills);
`batches` keeps each batch's request custom_ids in creation order.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import Counter, deque
from email.parser import BytesParser
from http.server import ThreadingHTTPServer
from typing import Any

from tests.loopback import LoopbackServer, _error_body, _make_handler, count_tokens


class BatchLoopbackServer(LoopbackServer):
    def __init__(self, **kw: Any):
        super().__init__(**kw)
        self.files: dict[str, bytes] = {}
        self.batch_objects: dict[str, dict[str, Any]] = {}
        self.batch_order: list[str] = []
        self.batches: list[list[str]] = []  # the custom_ids of each batch, in creation order
        self.batch_modes: deque[str] = deque()
        self.batch_mode = "completed"
        self.polls_before_done = 0
        self.error_text = "The server had an error."  # the message of a "partial" batch's failed requests
        self.billed: Counter[str] = Counter()
        self._ids = itertools.count(1)
        self._polls: Counter[str] = Counter()

    def start(self) -> BatchLoopbackServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_batch_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    # -- the endpoints' logic (called under the handler) ------------------------------------------
    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids):04d}"

    def upload(self, data: bytes, filename: str = "input.jsonl") -> dict[str, Any]:
        with self._lock:
            fid = self._new_id("file")
            self.files[fid] = data
        return {
            "id": fid,
            "object": "file",
            "bytes": len(data),
            "purpose": "batch",
            "filename": filename,
            "created_at": int(time.time()),
            "status": "processed",
        }

    def create_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        fid = str(body.get("input_file_id", ""))
        if fid not in self.files or body.get("endpoint") != "/v1/chat/completions":
            return 400, {"error": {"message": f"bad batch request {body}", "type": "invalid_request_error"}}
        lines = [json.loads(x) for x in self.files[fid].decode().splitlines() if x.strip()]
        with self._lock:
            bid = self._new_id("batch")
            mode = self.batch_modes.popleft() if self.batch_modes else self.batch_mode
            self.batches.append([str(x["custom_id"]) for x in lines])
            self.batch_order.insert(0, bid)
            self.batch_objects[bid] = {
                "id": bid,
                "object": "batch",
                "endpoint": body["endpoint"],
                "input_file_id": fid,
                "completion_window": body.get("completion_window"),
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "errors": None,
                "created_at": int(time.time()),
                "metadata": body.get("metadata") or {},
                "_mode": mode,
            }
        return 200, self._public(bid)

    def _public(self, bid: str) -> dict[str, Any]:
        return {k: v for k, v in self.batch_objects[bid].items() if not k.startswith("_")}

    def retrieve(self, bid: str) -> dict[str, Any] | None:
        with self._lock:
            batch = self.batch_objects.get(bid)
            if batch is None:
                return None
            if batch["status"] in ("validating", "in_progress"):
                self._polls[bid] += 1
                if self._polls[bid] > self.polls_before_done:
                    self._run(batch)
                else:
                    batch["status"] = "in_progress"
        return self._public(bid)

    def _run(self, batch: dict[str, Any]) -> None:
        """Answer the batch's requests as its mode says (called with the lock held)."""
        mode = batch["_mode"]
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]].decode().splitlines() if x.strip()]
        if mode == "failed":
            batch.update(
                status="failed",
                errors={
                    "object": "list",
                    "data": [{"code": "invalid_request", "message": "the batch failed validation"}],
                },
            )
            return
        out, err = [], []
        for i, line in enumerate(lines):
            cid = line["custom_id"]
            if mode == "expired" and i >= len(lines) // 2:
                err.append(
                    {
                        "id": f"req-{i}",
                        "custom_id": cid,
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "This request could not be executed before the completion window expired.",
                        },
                    }
                )
            elif mode == "partial" and i % 3 == 1:
                err.append(
                    {
                        "id": f"req-{i}",
                        "custom_id": cid,
                        "error": None,
                        "response": {
                            "status_code": 500,
                            "body": {"error": {"message": self.error_text, "type": "server_error"}},
                        },
                    }
                )
            else:
                out.append(
                    {
                        "id": f"req-{i}",
                        "custom_id": cid,
                        "error": None,
                        "response": {"status_code": 200, "request_id": f"r{i}", "body": self._answer(line)},
                    }
                )
                self.billed[cid] += 1
        for key, rows in (("output_file_id", out), ("error_file_id", err)):
            if rows:
                fid = self._new_id("file")
                self.files[fid] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[key] = fid
        batch["status"] = "expired" if mode == "expired" else "completed"

    def _answer(self, line: dict[str, Any]) -> dict[str, Any]:
        body = line["body"]
        messages = body.get("messages", [])
        text = self.reply(messages, body) if callable(self.reply) else (self.reply[0] if self.reply else "")
        p = sum(count_tokens(str(m.get("content", ""))) for m in messages)
        c = count_tokens(text)
        return {
            "id": f"chatcmpl-{line['custom_id']}",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
        }

    def list_batches(self, limit: int, after: str) -> dict[str, Any]:
        with self._lock:
            order = list(self.batch_order)
        start = order.index(after) + 1 if after in order else 0
        page = order[start : start + limit]
        return {"object": "list", "data": [self._public(b) for b in page], "has_more": start + limit < len(order)}


def _make_batch_handler(srv: BatchLoopbackServer):
    base = _make_handler(srv)

    class Handler(base):  # type: ignore[misc, valid-type]
        def _json(self, status: int, payload: dict[str, Any]) -> None:
            self._send(status, json.dumps(payload).encode())

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            path = path.rstrip("/")
            args = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
            if m := re.search(r"/files/([^/]+)/content$", path):
                data = srv.files.get(m.group(1))
                if data is None:
                    return self._json(404, {"error": {"message": "no such file"}})
                return self._send(200, data)
            if m := re.search(r"/batches/([^/]+)$", path):
                found = srv.retrieve(m.group(1))
                return self._json(200, found) if found else self._json(404, {"error": {"message": "no such batch"}})
            if path.endswith("/batches"):
                return self._json(200, srv.list_batches(int(args.get("limit", 20)), args.get("after", "")))
            return super().do_GET()

        def do_POST(self) -> None:
            path = self.path.partition("?")[0].rstrip("/")
            if path.endswith("/files"):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                head = f"Content-Type: {self.headers.get('Content-Type')}\r\n\r\n".encode()
                msg = BytesParser().parsebytes(head + raw)
                subparts: list[Any] = list(msg.get_payload())  # a multipart body: its parts are messages
                parts = {
                    p.get_param("name", header="content-disposition"): p.get_payload(decode=True) for p in subparts
                }
                names = {p.get_param("name", header="content-disposition"): p.get_filename() for p in subparts}
                with srv._lock:
                    srv.headers.append({k.lower(): v for k, v in self.headers.items()})
                if parts.get("purpose") != b"batch" or not parts.get("file"):
                    return self._json(400, {"error": {"message": "purpose must be batch, with a file"}})
                return self._json(200, srv.upload(parts["file"], str(names.get("file") or "input.jsonl")))
            if path.endswith("/batches"):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with srv._lock:
                    srv.headers.append({k.lower(): v for k, v in self.headers.items()})
                fault = srv.faults.popleft() if srv.faults else None
                if fault and fault.isdigit():
                    return self._send(int(fault), _error_body(int(fault)))
                status, made = srv.create_batch(body)
                if fault == "created_500":  # the batch exists, the reply says it failed
                    return self._send(500, _error_body(500))
                return self._json(status, made)
            return super().do_POST()

    return Handler
