"""The reward service: ``kbench serve``, an HTTP API that judges candidates and answers with the verdict
and its reward (kbench.rewards), for trainers that run elsewhere.

``jobs`` (the durable job store), ``payload`` (what a request may ask for), ``service`` (the queue, the
scheduler and the executors' slots), ``app`` (the FastAPI routes) and ``client`` (``RewardClient``, the
standard library only). FastAPI and uvicorn are an optional extra (``pip install 'kbench[serve]'``),
imported only by ``app`` and by ``kbench serve``; the client needs neither.

May import: everything below it (core ... runs, rewards, agents); never the adapters or the CLI.
"""
