"""A model server on loopback for the tests: OpenAI's chat completions and Anthropic's
messages over real HTTP, with answers scripted by the test. Nothing leaves this machine."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

FENCE = "```"


@dataclass
class Seen:
    """A request as the server received it."""

    path: str
    body: dict
    headers: dict
    arrived: float
    answered: float = 0.0

    @property
    def prompt(self) -> str:
        return self.body["messages"][-1]["content"]


@dataclass
class Answer:
    """What to send back: a reply text (status 200), or an error status with a message."""

    text: str = ""
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    prompt_tokens: int = 100
    completion_tokens: int = 50


def code_reply(code: str, prose: str = "Here is a faster version.") -> str:
    return f"{prose}\n\n{FENCE}python\n{code.rstrip()}\n{FENCE}\n"


def fake_code(mark: str) -> str:
    """A solution the fake judge of run_fixtures reads its verdict from ("correct 2.0", "incorrect")."""
    return f"# fake: {mark}\nimport torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n"


class ModelServer:
    """``respond(seen, number)`` gives an Answer or a reply text for the ``number``-th request (from 0)."""

    def __init__(self, respond: Callable[[Seen, int], Answer | str]):
        self.respond = respond
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the name http.server calls
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                seen = Seen(self.path, body, {k.lower(): v for k, v in self.headers.items()}, time.monotonic())
                with server.lock:
                    number = len(server.seen)
                    server.seen.append(seen)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    answer = server.respond(seen, number)
                    answer = Answer(answer) if isinstance(answer, str) else answer
                    time.sleep(answer.delay)
                    self._send(answer, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                finally:
                    seen.answered = time.monotonic()
                    with server.lock:
                        server.in_flight -= 1

            def _send(self, answer: Answer, body: dict) -> None:
                if answer.status != 200:
                    payload = {"error": {"message": answer.text or "scripted error", "type": "test_error"}}
                elif self.path.endswith("/messages"):
                    payload = {
                        "id": "msg_test", "type": "message", "role": "assistant", "model": body.get("model"),
                        "content": [{"type": "text", "text": answer.text}], "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {"input_tokens": answer.prompt_tokens, "output_tokens": answer.completion_tokens},
                    }
                else:
                    payload = {
                        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
                                  "total_tokens": answer.prompt_tokens + answer.completion_tokens},
                    }
                data = json.dumps(payload).encode()
                self.send_response(answer.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("x-request-id", "req-test")
                for key, value in answer.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def url(self) -> str:
        """The base URL of the OpenAI-compatible API."""
        return self.root + "/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
