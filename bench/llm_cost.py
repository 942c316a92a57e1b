"""What extraction costs with a network model: prompt and completion tokens
and calls per message, counted by a local OpenAI-compatible server of the
benchmark's own while the real pipeline extracts a 1,000-message
conversation.

1. Starts the model: a ThreadingHTTPServer on a free loopback port that
   serves `POST /v1/chat/completions`. It counts every request's tokens with
   the service's tokenizer (system + user text, and 7 tokens of message
   framing, as OpenAI bills a two-message chat), plays a prefix cache (a
   system prompt it saw on the previous request counts as cached, as the
   providers' caches report it), and answers with the scripted model
   (bench/llm_double.py: the offline extractor's reading of the prompt), so
   the pipeline writes real memories from what the prompt shows.
2. Starts the service as bench/recall.py does (gunicorn + one Celery worker
   on a database of its own), with LLM_PROVIDER=openai pointed at that
   server, the service's default extraction settings and no embeddings.
3. `live`: appends the conversation one message per request, the worker
   extracting as it goes; then the idle path takes the tail (queued at once
   rather than after MEMORY_IDLE_EXTRACT_SECONDS).
4. `batch`: the same messages in another conversation, 100 per request.

The conversation: the recall corpus generator's user-assistant dialog, grown
to 1,000 turns (a seed of its own).

Printed: per phase calls, prompt, cached and completion tokens, the largest
prompt, and

    ratio prompt_tokens_per_message_live <v> <= 250
    ratio prompt_tokens_per_message_batch <v> <= 100

Every call counts, extraction and compaction alike.

    .venv/bin/python bench/llm_cost.py [--messages 1000] [--database sqlite|postgresql] [--keep]

PostgreSQL as for bench/recall.py (PG_URL, REDIS_URL, BENCH_REDIS_DB), database
`bench_llm_cost`. Traffic goes only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE / "recall_corpus")]

import generate  # noqa: E402
import llm_double  # noqa: E402
import recall as harness  # noqa: E402

from memories.llm.tokens import count_tokens  # noqa: E402

# OpenAI's framing of a chat request of two messages (per message and reply priming).
FRAMING_TOKENS = 7
SEED = 41
GOALS = {"live": 250, "batch": 100}


class Meter:
    """What the model was sent and answered, phase by phase."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.phase = "setup"
        self.totals: dict[str, dict[str, int]] = {}
        self.last_system: str | None = None

    def count(self, system: str, user: str, reply: str) -> tuple[int, int, int]:
        prompt = count_tokens(system) + count_tokens(user) + FRAMING_TOKENS
        completion = count_tokens(reply)
        with self.lock:
            cached = count_tokens(system) if system == self.last_system else 0
            self.last_system = system
            kind = "compact" if system == llm_double.prompts.COMPACT_SYSTEM else "extract"
            t = self.totals.setdefault(self.phase, {"calls": 0, "prompt": 0, "cached": 0, "completion": 0,
                                                    "largest": 0, "compact_calls": 0})
            t["calls"] += 1
            t["prompt"] += prompt
            t["cached"] += cached
            t["completion"] += completion
            t["largest"] = max(t["largest"], prompt)
            t["compact_calls"] += kind == "compact"
        return prompt, completion, cached


def serve(meter: Meter) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            if self.path.rstrip("/") != "/v1/chat/completions":
                self.send_error(404)
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            system = "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")
            user = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
            reply = llm_double.answer(system, user)
            prompt, completion, cached = meter.count(system, user, reply)
            out = json.dumps({
                "id": "chatcmpl-bench", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                          "prompt_tokens_details": {"cached_tokens": cached}},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def conversation(n: int) -> list[dict]:
    cfg = dict(next(d for d in generate.DIALOGS if d["id"] == "priya-assistant"))
    cfg.update(id="llm-cost", turns=max(n, 1000) + 40, sessions=max(15, n // 40))
    turns = generate.build(cfg, SEED)["turns"][:n]
    if len(turns) < n:
        raise SystemExit(f"the generator made {len(turns)} turns, fewer than {n}")
    return turns


def message(turn: dict) -> dict:
    return {"role": turn["role"], "content": turn["content"],
            "metadata": {"session": turn["session"], "timestamp": turn["time"]}}


def main() -> int:
    parser = argparse.ArgumentParser(description="Extraction cost with a network model, counted by a local one.")
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    turns = conversation(args.messages)
    meter = Meter()
    model = serve(meter)
    harness.DB_NAME = "bench_llm_cost"
    service = harness.Service(database=args.database, keep=args.keep, batch_floors=0)
    # The service's own extraction settings, not the recall benchmark's.
    for name in ("MEMORY_EXTRACT_BATCH_FLOORS", "MEMORY_COMPACT_MIN_MICROS"):
        service.env.pop(name, None)
    service.env.update({
        "LLM_PROVIDER": "openai", "LLM_MODEL": "bench-scripted", "LLM_API_KEY": "bench",
        "LLM_BASE_URL": f"http://127.0.0.1:{model.server_address[1]}/v1", "EMBEDDING_PROVIDER": "none",
    })
    backlog = harness.Backlog(service.env)
    started = time.monotonic()
    elapsed: dict[str, float] = {}
    try:
        key = service.prepare()
        service.start_web()
        service.start_worker()
        api = harness.Api(service.base, key)
        print(f"{len(turns)} messages, {sum(count_tokens(t['content']) for t in turns)} tokens of text; "
              f"model on 127.0.0.1:{model.server_address[1]}", flush=True)
        for phase in ("live", "batch"):
            t = time.monotonic()
            meter.phase = phase
            cid = f"llm-cost-{phase}"
            api.call("POST", "/v1/conversations", json={"conversation_id": cid, "user_id": f"user-{phase}"})
            if phase == "live":
                for turn in turns:
                    api.call("POST", f"/v1/conversations/{cid}/messages", json=message(turn))
            else:
                for start in range(0, len(turns), 100):
                    api.call("POST", f"/v1/conversations/{cid}/messages",
                             json={"messages": [message(turn) for turn in turns[start:start + 100]]})
            harness.wait_pipeline(api, service, backlog, {cid: len(turns)}, what=phase)
            harness.report_failed_jobs(api)
            elapsed[phase] = time.monotonic() - t
    finally:
        service.stop()
        model.shutdown()

    print()
    for phase in ("live", "batch"):
        c = meter.totals.get(phase) or {"calls": 0, "prompt": 0, "cached": 0, "completion": 0, "largest": 0,
                                        "compact_calls": 0}
        per_message = c["prompt"] / len(turns)
        print(f"{phase}: {c['calls']} calls ({c['compact_calls']} compaction), prompt tokens {c['prompt']} "
              f"(cached {c['cached']}), completion tokens {c['completion']}, largest prompt {c['largest']}; "
              f"{elapsed[phase]:.0f}s")
        print(f"calls_per_1000_messages_{phase} {1000 * c['calls'] / len(turns):.1f}")
        print(f"completion_tokens_per_message_{phase} {c['completion'] / len(turns):.1f}")
        print(f"ratio prompt_tokens_per_message_{phase} {per_message:.1f} <= {GOALS[phase]}")
    print(f"time total {time.monotonic() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
