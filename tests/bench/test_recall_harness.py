"""The recall benchmark's corpus and scoring: the committed dialogs are what the
generator writes and hold what the benchmark promises; the scoring credits
exactly the evidence a context response names, in the shapes the service has
answered with (memory ids to look up, `sources`, passages)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "recall_corpus"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generate():
    return _load("recall_corpus_generate", CORPUS / "generate.py")


@pytest.fixture(scope="module")
def recall():
    return _load("bench_recall", ROOT / "bench" / "recall.py")


@pytest.fixture(scope="module")
def dialogs():
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CORPUS.glob("*.json"))]


def test_committed_corpus_is_what_the_generator_writes(generate):
    for cfg in generate.DIALOGS:
        assert (CORPUS / f"{cfg['id']}.json").read_text(encoding="utf-8") == generate.render(generate.build(cfg, generate.SEED))


def test_corpus_shape(dialogs):
    assert {(d["kind"], d["language"]) for d in dialogs} == {
        ("human-human", "en"), ("user-assistant", "en"), ("user-assistant", "zh")}
    for d in dialogs:
        turns, questions = d["turns"], d["questions"]
        assert len(turns) >= 400 and len(d["sessions"]) >= 5
        assert [t["index"] for t in turns] == list(range(len(turns)))
        assert len(questions) >= 150
        by_category = {c: [q for q in questions if q["category"] == c] for c in
                       ("single-hop", "multi-hop", "temporal", "updated-fact", "cross-language")}
        assert all(len(qs) >= 10 for qs in by_category.values()), {c: len(qs) for c, qs in by_category.items()}
        assert all(len(q["evidence"]) >= 2 for q in by_category["multi-hop"])
        for q in by_category["cross-language"]:  # asked in the other language than the evidence is written in
            told = "".join(d["turns"][i]["content"] for i in q["evidence"])
            assert q["language"] == ("en" if any("\u4e00" <= c <= "\u9fff" for c in told) else "zh"), q
        for q in questions:
            assert q["answer"] and all(0 <= i < len(turns) for i in q["evidence"])
        # Times only move forward, sessions are dated in order.
        assert [t["time"] for t in turns] == sorted(t["time"] for t in turns)
        if d["kind"] == "human-human":
            assert all(t["content"].startswith("[") and f"] {t['speaker']}: " in t["content"] for t in turns)
            assert {t["role"] for t in turns} == {"user", "assistant"}


def test_corrections_are_evidenced_by_the_correcting_turn(dialogs):
    markers = ("changed my mind", "actually", "no longer", "instead", "rather than", "now", "not ", "改", "不再", "不用",
               "已经不", "其实", "变", "更新", "不是", "放弃", "退了", "switched", "scrap", "quit", "renamed", "update", "gave up",
               "don't", "change")
    for d in dialogs:
        for q in (q for q in d["questions"] if q["category"] == "updated-fact"):
            text = d["turns"][q["evidence"][0]]["content"]
            assert q["answer"] in text, (q, text)
            assert any(m in text.lower() for m in markers), text


def test_questions_paraphrase_rather_than_quote(dialogs, recall):
    """The lexical baseline must not be trivially perfect: a good share of
    questions shares no content term with their evidence."""
    for d in dialogs:
        disjoint = 0
        for q in d["questions"]:
            asked = set(recall.bm25_terms(q["question"]))
            told = set().union(*(recall.bm25_terms(recall.plain(d["turns"][i]["content"])) for i in q["evidence"]))
            disjoint += not (asked & told - {recall._stem("name")})
        assert disjoint >= len(d["questions"]) // 5, (d["id"], disjoint)


def test_bm25_terms_and_ranking(recall):
    assert recall.bm25_terms("What is the name of Owen's dog?") == ["nam", "owen", "dog"]
    assert len({recall._stem(w) for w in ("race", "races", "raced", "racing")}) == 1
    assert {recall._stem(w) for w in ("run", "runs", "running")} == {"run"}
    assert recall.bm25_terms("我家猫叫团子") == ["家猫", "猫叫", "叫团", "团子"]
    index = recall.BM25(["The cat sat on the mat.", "Dogs chase cats all day long, dogs everywhere.", "Tea time."])
    ranked = index.rank("dogs")
    assert [i for _, i in ranked] == [1]
    turns = [{"content": c} for c in ["alpha beta", "gamma delta", "beta beta beta"] + ["filler"] * 12]
    ids = [f"m{i}" for i in range(len(turns))]
    tokens = [recall.count_tokens(t["content"]) for t in turns]
    covered = recall.bm25_covered(recall.BM25([t["content"] for t in turns]), turns, ids, "beta", 3, tokens)
    assert "m2" in covered and "m1" not in covered  # the best turn within 3 tokens, plus the recent window
    assert set(ids[-recall.WINDOW:]) <= covered


def test_prefix_stripped_for_strict_matching(recall):
    assert recall.plain("[7:31 pm] Nate: I won my first   video game tournament.") == "I won my first video game tournament."
    assert recall.plain("我对芒果过敏。") == "我对芒果过敏。"
    assert recall.strict_of(["a b", "c"], "xx a b yy") == 0.5


class FakeResolver:
    def __init__(self, answers):
        self.answers, self.asked = answers, []

    def __call__(self, memory_id):
        self.asked.append(memory_id)
        return self.answers.get(memory_id, set())


def test_covered_ids_before_and_after_sources(recall):
    resolve = FakeResolver({"mem_a": {"msg_3"}})
    body = {
        "messages": [{"role": "system", "content": "…"}, {"id": "msg_9", "role": "user", "content": "hi"}],
        "memory": {"injected": [
            {"id": "mem_a", "type": "summary"},  # an older service: no sources in the entry
            {"id": "mem_b", "type": "fact", "sources": ["msg_4", {"message_id": "msg_5"}]},
            {"id": "msg_7:0", "kind": "passage", "source_message_id": "msg_7", "sources": ["msg_7"]},
        ]},
    }
    assert recall.covered_ids(body, resolve) == {"msg_9", "msg_3", "msg_4", "msg_5", "msg_7"}
    assert resolve.asked == ["mem_a"]
    assert recall.recall_of(["msg_3", "msg_8"], {"msg_3"}) == 0.5


def test_quick_subset_keeps_every_category(dialogs, recall):
    for d in dialogs:
        picked = recall.select_questions(d, quick=True)
        assert {q["category"] for q in picked} == {q["category"] for q in d["questions"]}
        assert len(d["questions"]) // 5 <= len(picked) <= len(d["questions"]) // 3
