"""`specbridge bench`: serving throughput, latency and the engine's own acceptance counters.

- `client`   async OpenAI-compatible streaming client (httpx), bounded reads, per-request deadlines
- `metrics`  vLLM Prometheus `/metrics` and SGLang `/server_info` / per-request `meta_info` acceptance
- `runner`   concurrency levels, baseline vs spec, speedup and crossover, abort on a failing server
- `report`   rich table / JSON / PNG plot
- `server`   start an engine command, wait for readiness, follow its log, stop it (tests, later `serve`)
- `prompts`  the default prompt set
"""
