"""A loopback OpenAI-compatible server standing in for an LLM provider in tests and benches.

Serves `POST /v1/chat/completions` and `POST /v1/embeddings` (also without the `/v1` prefix) on
127.0.0.1 at a free port, from a thread. Replies are scriptable, usage numbers are reported like
OpenAI does, an artificial latency can be added, and faults can be injected per request:

    with LoopbackServer() as srv:
        srv.reply = lambda messages, body: '{"triples": [["a", "b", "c"]]}'
        srv.faults.extend(["429", "500"])         # the next two requests fail, then normal replies
        client = LiteLLMClient("openai/gpt-4o-mini", api_base=srv.base_url, api_key="sk-test")

Faults (consumed one per request, in order, before normal handling; `fail_after`/`fail_mode`
make every request after the first N fail the same way):

    "429", "500", "503", "401", "404"  that HTTP status with an OpenAI-style error body
    "hang"        sleep `hang_seconds` before answering (a client timeout fires first)
    "truncated"   a 200 whose JSON body is cut in half
    "empty"       a 200 whose completion text is ""
    "length"      a 200 with finish_reason "length" (the reply was cut by max_tokens)
    "echo_key"    a 400 whose error message repeats the request's Authorization header (a
                  provider echoing the key back; the client must scrub it)

Chat-only modes (`chat_mode`, every chat completion; embeddings are served normally):

    "drip"        a 200 whose body comes `drip_bytes_per_s` bytes a second (default 1), each byte
                  resetting the client's read timeout; ends when the server stops
    "huge"        a 200 whose completion text is `huge_bytes` long (default 50 MB)
    "reset"       half the body, then the connection is closed (a reset mid-body)

`requests` holds every body received; `answered` only the chat bodies answered with a 200
completion (what a provider would bill). `GET /api/tags` answers like Ollama with `ollama_models`.

Other engineers' tests use the `loopback_llm` fixture: `from tests.loopback import loopback_llm`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

ReplyFn = Callable[[list[dict[str, Any]], dict[str, Any]], str]


def default_reply(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """An echo that changes with the prompt, so distinct prompts get distinct replies."""
    last = str(messages[-1].get("content", "")) if messages else ""
    return f"echo: {last[:40]}"


def count_tokens(text: str) -> int:
    """Whitespace tokens: deterministic usage numbers the tests can predict."""
    return len(text.split())


def deterministic_vector(text: str, dim: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(b - 127.5) / 127.5 for b in digest[:dim]]


class LoopbackServer:
    def __init__(self, *, latency: float = 0.0, embed_dim: int = 8, hang_seconds: float = 5.0):
        self.latency = latency
        self.embed_dim = embed_dim
        self.hang_seconds = hang_seconds
        self.reply: ReplyFn | list[str] = default_reply
        self.faults: deque[str] = deque()
        self.fail_after: int | None = None
        self.fail_mode = "500"
        self.requests: list[dict[str, Any]] = []  # every request body received, in arrival order
        self.answered: list[dict[str, Any]] = []  # chat bodies answered with a complete 200 reply
        self.ollama_models: list[str] = ["llama3:latest", "qwen2.5:7b"]
        self.headers: list[dict[str, str]] = []
        self.chat_mode: str | None = None
        self.drip_bytes_per_s = 1.0
        self.huge_bytes = 50 * 1024 * 1024
        self.chat_started: list[float] = []  # time.monotonic() of each chat request's arrival
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> LoopbackServer:
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends any drip in progress
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """OpenAI-style base URL (ends in /v1), what `api_base` expects."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- request accounting --------------------------------------------------------------------
    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if "messages" in r]

    def _next_fault(self) -> str | None:
        with self._lock:
            n = len(self.requests)
            if self.faults:
                return self.faults.popleft()
            if self.fail_after is not None and n > self.fail_after:
                return self.fail_mode
        return None

    def _scripted_text(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        if callable(self.reply):
            return self.reply(messages, body)
        with self._lock:
            if not self.reply:
                return ""
            return self.reply.pop(0) if len(self.reply) > 1 else self.reply[0]


def _error_body(status: int) -> bytes:
    kinds = {
        401: ("invalid_api_key", "Incorrect API key provided."),
        404: ("model_not_found", "The model does not exist."),
        429: ("rate_limit_exceeded", "Rate limit reached, slow down."),
        500: ("server_error", "The server had an error."),
        503: ("server_error", "Service unavailable."),
    }
    code, msg = kinds.get(status, ("error", "error"))
    return json.dumps({"error": {"message": msg, "type": code, "code": code}}).encode()


def _make_handler(srv: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in two writes; without TCP_NODELAY, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every reply, which would swamp latency measurements
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def _send(self, status: int, payload: bytes, *, declared_length: int | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(declared_length if declared_length is not None else len(payload)))
            self.end_headers()
            try:
                self.wfile.write(payload)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/api/tags"):
                models = [{"name": n, "model": n} for n in srv.ollama_models]
                self._send(200, json.dumps({"models": models}).encode())
            elif self.path.rstrip("/").endswith("/models"):
                self._send(
                    200, json.dumps({"object": "list", "data": [{"id": "loopback", "object": "model"}]}).encode()
                )
            else:
                self._send(404, _error_body(404))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            with srv._lock:
                srv.requests.append(body)
                srv.headers.append({k.lower(): v for k, v in self.headers.items()})
            fault = srv._next_fault()
            if srv.latency:
                time.sleep(srv.latency)
            if fault == "hang":
                time.sleep(srv.hang_seconds)
                fault = None
            if fault == "echo_key":
                msg = f"Bad request with header Authorization: {self.headers.get('Authorization', '')}"
                self._send(400, json.dumps({"error": {"message": msg, "type": "invalid_request_error"}}).encode())
                return
            if fault and fault.isdigit():
                self._send(int(fault), _error_body(int(fault)))
                return
            if self.path.rstrip("/").endswith("/embeddings"):
                self._embeddings(body)
            elif self.path.rstrip("/").endswith("/chat/completions"):
                self._chat(body, fault)
            else:
                self._send(404, _error_body(404))

        def _embeddings(self, body: dict[str, Any]) -> None:
            inputs = body.get("input", [])
            if isinstance(inputs, str):
                inputs = [inputs]
            data = [
                {"object": "embedding", "index": i, "embedding": deterministic_vector(str(t), srv.embed_dim)}
                for i, t in enumerate(inputs)
            ]
            n = sum(count_tokens(str(t)) for t in inputs)
            payload = {
                "object": "list",
                "data": data,
                "model": body.get("model", "loopback"),
                "usage": {"prompt_tokens": n, "total_tokens": n},
            }
            self._send(200, json.dumps(payload).encode())

        def _drip(self, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) + 100_000))  # never complete
            self.end_headers()
            try:
                self.wfile.flush()
                for i in range(len(data) + 100_000):
                    if srv._stopping.wait(1.0 / srv.drip_bytes_per_s):
                        break
                    self.wfile.write(data[i : i + 1] or b" ")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def _chat(self, body: dict[str, Any], fault: str | None) -> None:
            messages = body.get("messages", [])
            with srv._lock:
                srv.chat_started.append(time.monotonic())
            if srv.chat_mode == "huge":
                fault, text = None, "x" * srv.huge_bytes
            else:
                text = "" if fault == "empty" else srv._scripted_text(messages, body)
            prompt_tokens = sum(count_tokens(str(m.get("content", ""))) for m in messages)
            completion_tokens = count_tokens(text)
            payload = {
                "id": f"chatcmpl-loop{len(srv.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "loopback"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "length" if fault == "length" else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
            data = json.dumps(payload).encode()
            if srv.chat_mode == "drip":
                self._drip(data)
                return
            if srv.chat_mode == "reset":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if fault == "truncated":
                self._send(200, data[: len(data) // 2])
                return
            if text:
                with srv._lock:
                    srv.answered.append(body)
            self._send(200, data)

    return Handler


@pytest.fixture()
def loopback_llm():
    """A started `LoopbackServer`; `.base_url` is the api_base, `.requests` what it received."""
    srv = LoopbackServer().start()
    try:
        yield srv
    finally:
        srv.stop()
