"""The reward service's HTTP API (FastAPI): thin routes over ``Service``.

Routes (every answer JSON; every error ``{"error": "..."}`` with its status):

- ``GET /v1/health``: ``{"status": "ok"}``, without the token (for a load balancer's probe);
- ``GET /v1/info``: the judge's settings, the executor, the limits and the queue's counts;
- ``GET /v1/problems``: the suite ids a job may name;
- ``POST /v1/jobs``: one job ``{"problem", "source", "shape", "baseline"}`` (or ``"problem_source"``, a
  problem file's text, where the service allows it) or a batch ``{"jobs": [...]}``; 202 with ``{"id"}`` or
  ``{"ids"}`` once the jobs are committed; 400/403/413/422 for a bad request, 503 ``busy`` (with
  ``Retry-After``) when the queue is full; nothing is stored for a refused request;
- ``GET /v1/jobs/{id}?wait=S``: the job (its state, and once ``done`` its status, reward and verdict),
  waiting up to S seconds (at most 60) for it to be done; 404 for an id the service never gave.

With a token, every route but the health check needs ``Authorization: Bearer TOKEN`` (401 otherwise).
"""

from __future__ import annotations

import contextlib
import hmac
import re

import anyio.to_thread

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from kbench.rewards.reward import kbench_version
from kbench.serve.jobs import Busy
from kbench.serve.payload import PayloadError
from kbench.serve.service import Service

JOB_ID = re.compile(r"[0-9a-f]{32}")
RETRY_AFTER_SECONDS = 5
OPEN_PATHS = frozenset({"/v1/health"})
# Threads for the routes that block (a job's wait holds one for up to a minute): many more than anyio's 40, so
# that clients waiting on their jobs never keep a submission waiting.
ROUTE_THREADS = 256


def error(status: int, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers or None)


def create_app(service: Service, token: str | None = None) -> FastAPI:
    """The API over ``service``; ``token``: the bearer token every route but the health check needs."""
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):  # noqa: ANN202
        anyio.to_thread.current_default_thread_limiter().total_tokens = ROUTE_THREADS
        yield

    app = FastAPI(title="kbench reward service", version=kbench_version(), docs_url=None, redoc_url=None,
                  openapi_url=None, lifespan=lifespan)
    expected = f"Bearer {token}".encode() if token else None

    @app.middleware("http")
    async def authorize(request: Request, call_next):  # noqa: ANN202 - Starlette's middleware signature
        if expected is not None and request.url.path not in OPEN_PATHS:
            given = request.headers.get("authorization", "").encode("utf-8", "replace")
            if not hmac.compare_digest(given, expected):
                return error(401, "a valid token is needed: Authorization: Bearer TOKEN", **{"WWW-Authenticate": "Bearer"})
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors())
        return error(422, problems or "invalid request")

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return error(exc.status_code, str(exc.detail))

    @app.get("/v1/health")
    def health() -> dict:
        return {"status": "ok"}

    @app.get("/v1/info")
    def info() -> dict:
        return service.describe()

    @app.get("/v1/problems")
    def problems() -> dict:
        return {"problems": sorted(service.problems)}

    @app.post("/v1/jobs", status_code=202)
    async def submit(request: Request):  # noqa: ANN202
        limit = service.limits.max_body_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return error(413, f"the request body is {declared} bytes, more than the {limit} this service takes")
        body, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return error(413, f"the request body is more than the {limit} bytes this service takes")
            body.append(chunk)
        try:
            ids, batch = await run_in_threadpool(service.submit, b"".join(body))
        except PayloadError as exc:
            return error(exc.status, exc.message)
        except Busy as exc:
            return error(503, f"busy: {exc}", **{"Retry-After": str(RETRY_AFTER_SECONDS)})
        return JSONResponse({"ids": ids} if batch else {"id": ids[0]}, status_code=202)

    @app.get("/v1/jobs/{job_id}")
    def job(job_id: str, wait: float = 0.0):  # noqa: ANN202
        if not JOB_ID.fullmatch(job_id):
            return error(404, f"no job {job_id[:40]!r}: ids are 32 hex digits, as POST /v1/jobs gave them")
        found = service.wait(job_id, wait) if wait > 0 else service.job(job_id)
        if found is None:
            return error(404, f"no job {job_id!r}")
        return found.public()

    return app
