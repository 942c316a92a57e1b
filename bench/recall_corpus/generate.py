"""Writes the recall corpus: long multi-session dialogs with questions whose
evidence turns are known, for bench/recall.py.

Deterministic (a fixed seed): running it again rewrites the same JSON, and
`--check` says whether the committed files are what it would write.

    python bench/recall_corpus/generate.py [--check]

Each dialog is composed from the hand-written material in templates_en.py and
templates_zh.py: facts dropped into chatter, corrected later, dated events told
relative to the session's date, third parties introduced in one turn and
described in another. One file per dialog:

    {"id", "title", "kind": "human-human" | "user-assistant", "language",
     "user_id", "speakers": {"user": name, "assistant": name},
     "sessions": [{"session", "date", "start"}],
     "turns": [{"index", "session", "role", "speaker", "time", "content"}],
     "questions": [{"id", "category", "language", "question", "answer", "evidence": [turn index, ...]}]}

Categories: single-hop, multi-hop (evidence in 2+ turns), temporal (the
answer needs the session's date), updated-fact (the corrected value; the
evidence is the correcting turn), cross-language (asked in the other language).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import templates_en as EN  # noqa: E402
import templates_zh as ZH  # noqa: E402

SEED = 20230304
CATEGORIES = ("single-hop", "multi-hop", "temporal", "updated-fact", "cross-language")
MIN_TURNS = 400
MIN_QUESTIONS = 150

DIALOGS = [
    {
        "id": "owen-rosa", "title": "Two friends catching up (human-human, English)", "kind": "human-human",
        "language": "en", "T": EN, "user_id": "owen", "start": date(2023, 3, 4), "sessions": 15, "turns": 560,
        "speakers": {"A": "Owen", "B": "Rosa"}, "owners": ["A", "B"],
        "self_kinds": 20, "people": 4, "attrs": 2, "events_past": 6, "events_future": 4, "updates": 8,
        "deadlines": 0, "trips": True, "classes": 1, "costs": 2, "compare": True, "cross": 28,
    },
    {
        "id": "priya-assistant", "title": "A user and an assistant (English)", "kind": "user-assistant",
        "language": "en", "T": EN, "user_id": "priya", "start": date(2023, 9, 12), "sessions": 15, "turns": 520,
        "speakers": {"A": "Priya", "B": "Assistant"}, "owners": ["A"],
        "self_kinds": 28, "people": 8, "attrs": 3, "events_past": 10, "events_future": 7, "updates": 14,
        "deadlines": 6, "trips": True, "classes": 1, "costs": 2, "compare": False, "cross": 30,
    },
    {
        "id": "xiaoyu-assistant", "title": "A user and an assistant (Chinese, a few English turns)", "kind": "user-assistant",
        "language": "zh", "T": ZH, "user_id": "lin-xiaoyu", "start": date(2024, 1, 8), "sessions": 15, "turns": 520,
        "speakers": {"A": "晓雨", "B": "助手"}, "name_en": "Xiaoyu", "owners": ["A"],
        "self_kinds": 28, "people": 8, "attrs": 3, "events_past": 10, "events_future": 8, "updates": 12,
        "deadlines": 5, "trips": True, "classes": 1, "costs": 2, "compare": False, "cross": 30,
    },
]

# --- Relative dates ----------------------------------------------------------------


def _en(d: date) -> str:
    return f"{d.day} {d:%B} {d.year}"


def _zh(d: date) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def _last(d: date, weekday: int) -> date:
    back = (d.weekday() - weekday) % 7 or 7
    return d - timedelta(days=back)


def _next(d: date, weekday: int) -> date:
    ahead = (weekday - d.weekday()) % 7 or 7
    return d + timedelta(days=ahead)


def _day(d: date) -> tuple[str, str]:
    return _en(d), _zh(d)


# (English words, Chinese words, session date -> (English answer, Chinese answer))
WHEN_PAST = [
    ("yesterday", "昨天", lambda d: _day(d - timedelta(days=1))),
    ("two days ago", "前天", lambda d: _day(d - timedelta(days=2))),
    ("last Saturday", "上周六", lambda d: _day(_last(d, 5))),
    ("last Sunday", "上周日", lambda d: _day(_last(d, 6))),
    ("this morning", "今天早上", lambda d: _day(d)),
    ("last week", "上周", lambda d: (f"the week before {_en(d)}", f"{_zh(d)}的前一周")),
    ("last weekend", "上个周末", lambda d: (f"the weekend of {_en(_last(d, 5))} and {_en(_last(d, 5) + timedelta(days=1))}",
                                             f"{_zh(_last(d, 5))}至{_zh(_last(d, 5) + timedelta(days=1))}的周末")),
]
WHEN_FUTURE = [
    ("tomorrow", "明天", lambda d: _day(d + timedelta(days=1))),
    ("the day after tomorrow", "后天", lambda d: _day(d + timedelta(days=2))),
    ("on Friday", "这周五", lambda d: _day(_next(d, 4))),
    ("this coming Saturday", "这周六", lambda d: _day(_next(d, 5))),
    ("next Tuesday", "下周二", lambda d: _day(_next(d, 1) + timedelta(days=7 if _next(d, 1) - d < timedelta(days=4) else 0))),
    ("in two weeks", "两周后", lambda d: (f"around {_en(d + timedelta(days=14))}", f"{_zh(d + timedelta(days=14))}前后")),
]
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


# --- The dialog under construction ------------------------------------------------------


@dataclass
class Exchange:
    """Consecutive turns placed together: a fact and its reaction, or chatter.
    `turns` hold (speaker key "A"/"B" or template role "X"/"Y", text)."""

    turns: list[tuple[str, str]]
    session: int
    pos: float
    key: str | None = None
    chatter: bool = False


@dataclass
class Question:
    category: str
    language: str
    question: str
    answer: str
    evidence: list[str]


@dataclass
class Builder:
    cfg: dict
    rng: random.Random
    dates: list[date] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    cross_pool: list[Question] = field(default_factory=list)
    by_key: dict[str, Exchange] = field(default_factory=dict)
    used_names: set[str] = field(default_factory=set)

    @property
    def T(self):
        return self.cfg["T"]

    @property
    def zh(self) -> bool:
        return self.cfg["language"] == "zh"

    @property
    def human(self) -> bool:
        return self.cfg["kind"] == "human-human"

    def other(self, owner: str) -> str:
        return "B" if owner == "A" else "A"

    def base_values(self, owner: str) -> dict[str, str]:
        names = self.cfg["speakers"]
        return {"name": names[owner], "other": names[self.other(owner)], "name_en": self.cfg.get("name_en", names[owner])}

    def fmt(self, template: str, values: dict[str, str]) -> str:
        full = dict(values)
        for k, v in values.items():
            if isinstance(v, str) and v:
                full[f"{k}_cap"] = v[0].upper() + v[1:]
        return template.format(**full)

    # Placement ---------------------------------------------------------------------

    def pick_session(self, lo: int = 1, hi: int | None = None) -> int:
        n = self.cfg["sessions"]
        hi = n if hi is None else min(hi, n)
        return self.rng.randint(min(lo, hi), hi)

    def add_fact(self, owner: str, text: str, *, topic: str = "", react: list[str] | None = None,
                 session: int | None = None, after: str | None = None) -> str:
        if session is None:
            session = self.pick_session()
        pos = self.rng.random()
        if after is not None:
            dep = self.by_key[after]
            assert dep.session <= session, (dep.session, session)
            if dep.session == session:
                pos = dep.pos + (1 - dep.pos) * self.rng.uniform(0.1, 0.9)
        key = f"f{len(self.exchanges)}"
        turns = [(owner, text)]
        other = self.other(owner)
        if self.human:
            pool = (react or []) if react and self.rng.random() < 0.5 else self.T.REACT_HUMAN
            turns.append((other, self.rng.choice(pool)))
        elif react is not None and not topic:
            turns.append((other, self.rng.choice(react)))
        else:
            turns.append((other, self.rng.choice(self.T.REACT_ASSISTANT).format(topic=topic or "that")))
        exchange = Exchange(turns=turns, session=session, pos=pos, key=key)
        self.exchanges.append(exchange)
        self.by_key[key] = exchange
        return key

    def date_of(self, key: str) -> date:
        return self.dates[self.by_key[key].session - 1]

    def ask(self, category: str, question: str, answer: str, evidence: list[str], *, language: str | None = None) -> None:
        self.questions.append(Question(category, language or self.cfg["language"], question, answer, evidence))

    def offer_cross(self, question: str, answer: str, evidence: list[str]) -> None:
        other_language = "en" if self.zh else "zh"
        self.cross_pool.append(Question("cross-language", other_language, question, answer, evidence))

    # Material --------------------------------------------------------------------------

    def sample_values(self, pool: list, k: int) -> list:
        return self.rng.sample(pool, k)

    def build_self(self) -> dict[str, dict[str, tuple[str, dict]]]:
        """Per owner: kind -> (evidence key, values)."""
        made: dict[str, dict[str, tuple[str, dict]]] = {o: {} for o in self.cfg["owners"]}
        kinds = list(self.T.SELF)
        required = [k for k in ("dog", "cat", "siblings", "commute") if k in self.T.SELF]
        per_kind_values = {k: self.sample_values(self.T.SELF[k]["values"], len(self.T.SELF[k]["values"])) for k in kinds}
        for owner in self.cfg["owners"]:
            rest = [k for k in kinds if k not in required]
            chosen = required + self.rng.sample(rest, self.cfg["self_kinds"] - len(required))
            for kind in chosen:
                spec = self.T.SELF[kind]
                values = {**self.base_values(owner), **per_kind_values[kind].pop()}
                text = self.fmt(self.rng.choice(spec["say"]), values)
                key = self.add_fact(owner, text, topic=spec.get("topic", ""), react=spec.get("react"))
                made[owner][kind] = (key, values)
                asks = list(spec["ask"])
                first = asks.pop(0)
                self.ask("single-hop", self.fmt(first[0], values), self.fmt(first[1], values), [key])
                if asks and self.rng.random() < 0.5:
                    q, a = self.rng.choice(asks)
                    self.ask("single-hop", self.fmt(q, values), self.fmt(a, values), [key])
                for q, a in spec.get("cross", [])[:1]:
                    self.offer_cross(self.fmt(q, values), self.fmt(a, values), [key])
        return made

    def build_people(self) -> None:
        T = self.T
        pools = {k: self.sample_values(v["values"], len(v["values"])) for k, v in T.OTHER.items()}
        names = self.sample_values(sorted(T.PEOPLE), len(T.PEOPLE))
        for owner in self.cfg["owners"]:
            # Gendered relations first, while names of both kinds are left.
            relations = sorted(self.sample_values(T.RELATIONS, self.cfg["people"]), key=lambda r: r not in T.RELATION_GENDER)
            for rel in relations:
                wanted = T.RELATION_GENDER.get(rel)
                p = next(n for n in reversed(names) if wanted is None or T.PEOPLE[n] in (wanted, "u"))
                names.remove(p)
                values = {**self.base_values(owner), "p": p, "rel": rel}
                if self.zh:
                    values.update(p_en=T.PEOPLE_EN[p], rel_en=T.RELATIONS_EN[rel])
                else:
                    values.update(p_en=p, rel_zh=T.RELATIONS_ZH[rel])
                n = self.cfg["sessions"]
                intro = self.add_fact(owner, self.fmt(self.rng.choice(T.INTRO), values), topic=p, session=self.pick_session(1, n - 3))
                self.ask("single-hop", self.fmt(T.INTRO_ASK[0], values), self.fmt(T.INTRO_ASK[1], values), [intro])
                self.offer_cross(self.fmt(T.INTRO_CROSS[0], values), self.fmt(T.INTRO_CROSS[1], values), [intro])
                kinds = sorted(pools, key=lambda k: (-len(pools[k]), self.rng.random()))[: self.cfg["attrs"]]
                for kind in kinds:
                    spec = T.OTHER[kind]
                    attr_values = {**values, **pools[kind].pop()}
                    key = self.add_fact(owner, self.fmt(self.rng.choice(spec["say"]), attr_values), topic=p,
                                        session=self.pick_session(self.by_key[intro].session), after=intro)
                    q, a = spec["ask"][0]
                    self.ask("single-hop", self.fmt(q, attr_values), self.fmt(a, attr_values), [key])
                    q, a = spec["ask_rel"][0]
                    self.ask("multi-hop", self.fmt(q, attr_values), self.fmt(a, attr_values), [intro, key])
                    q, a = spec["cross"][0]
                    self.offer_cross(self.fmt(q, attr_values), self.fmt(a, attr_values), [key])

    def build_events(self) -> None:
        T = self.T
        for owner in self.cfg["owners"]:
            for table, whens, count in ((T.EVENTS_PAST, WHEN_PAST, self.cfg["events_past"]),
                                        (T.EVENTS_FUTURE, WHEN_FUTURE, self.cfg["events_future"])):
                for kind in self.rng.sample(list(table), min(count, len(table))):
                    spec = table[kind]
                    values = self.base_values(owner)
                    if "values" in spec:
                        taken = self.used_names
                        options = [v for v in spec["values"] if json.dumps(v, ensure_ascii=False) not in taken]
                        chosen = self.rng.choice(options)
                        taken.add(json.dumps(chosen, ensure_ascii=False))
                        values.update(chosen)
                    en_words, zh_words, resolve = self.rng.choice(whens)
                    values["when"] = zh_words if self.zh else en_words
                    session = self.pick_session()
                    text = self.fmt(self.rng.choice(spec["say"]), values)
                    if not self.zh:
                        text = text[0].upper() + text[1:]
                    key = self.add_fact(owner, text, topic=("这件事" if self.zh else "that"), session=session)
                    answer_en, answer_zh = resolve(self.dates[session - 1])
                    self.ask("temporal", self.fmt(spec["ask"], values), answer_zh if self.zh else answer_en, [key])
                    self.offer_cross(self.fmt(spec["cross"], values), answer_en if self.zh else answer_zh, [key])

    def build_updates(self) -> None:
        T = self.T
        n = self.cfg["sessions"]
        for index, owner in enumerate(self.cfg["owners"]):
            kinds = self.rng.sample(list(T.UPDATES), min(self.cfg["updates"], len(T.UPDATES)))
            for kind in kinds:
                spec = T.UPDATES[kind]
                values = {**self.base_values(owner), **spec["values"][index % len(spec["values"])]}
                old_session = self.pick_session(1, n - 3)
                old = self.add_fact(owner, self.fmt(self.rng.choice(spec["old"]), values), topic=("这件事" if self.zh else "that"),
                                    session=old_session)
                new = self.add_fact(owner, self.fmt(self.rng.choice(spec["new"]), values), topic=("这个变化" if self.zh else "the change"),
                                    session=self.pick_session(old_session + 2), after=old)
                q, a = spec["ask"]
                self.ask("updated-fact", self.fmt(q, values), self.fmt(a, values), [new])
                q, a = spec["cross"]
                self.offer_cross(self.fmt(q, values), self.fmt(a, values), [new])

    def build_deadlines(self) -> None:
        owner = self.cfg["owners"][0]
        for text, question in self.rng.sample(self.T.DEADLINES, self.cfg["deadlines"]):
            session = self.pick_session()
            due = self.dates[session - 1] + timedelta(days=self.rng.randint(6, 30))
            due_text = f"{due.month}月{due.day}日" if self.zh else f"{due.day} {due:%B}"
            values = {**self.base_values(owner), "date": due_text}
            key = self.add_fact(owner, self.fmt(text, values), topic=("这个截止日期" if self.zh else "the deadline"), session=session)
            self.ask("single-hop", self.fmt(question, values), due_text, [key])

    def build_multi(self, made: dict[str, dict[str, tuple[str, dict]]]) -> None:
        T = self.T
        trips = self.sample_values(T.TRIPS["values"], len(T.TRIPS["values"]))
        classes = self.sample_values(T.CLASSES["values"], len(T.CLASSES["values"]))
        costs = self.sample_values(T.COSTS["values"], len(T.COSTS["values"]))
        for index, owner in enumerate(self.cfg["owners"]):
            base = self.base_values(owner)
            mine = made[owner]
            if "dog" in mine and "cat" in mine:
                (dk, dv), (ck, cv) = mine["dog"], mine["cat"]
                self.ask("multi-hop", f"Which animals live with {base['name']}, and what are they called?",
                         f"a {dv['breed']} named {dv['dog']} and a {cv['color']} cat named {cv['cat']}", [dk, ck])
            if self.cfg["trips"]:
                a, b = trips.pop(), trips.pop()
                keys = [self.add_fact(owner, self.fmt(self.rng.choice(T.TRIPS["say"]), {**base, "place": place}),
                                      topic=("这次旅行" if self.zh else "the trip")) for place in (a, b)]
                q, ans = T.TRIPS["ask"]
                self.ask("multi-hop", self.fmt(q, base), self.fmt(ans, {"a": a, "b": b}), keys)
                if "cross" in T.TRIPS and index == 0:
                    q, ans = T.TRIPS["cross"]
                    self.offer_cross(self.fmt(q, base), self.fmt(ans, {"a": a, "b": b}), keys)
            if index < self.cfg["classes"]:
                a, b = classes.pop(), classes.pop()
                keys = [self.add_fact(owner, self.fmt(self.rng.choice(T.CLASSES["say"]), {**base, "cls": c}),
                                      topic=("这门课" if self.zh else "the course")) for c in (a, b)]
                q, ans = T.CLASSES["ask"]
                self.ask("multi-hop", self.fmt(q, base), self.fmt(ans, {"a": a, "b": b}), keys)
            for _ in range(self.cfg["costs"] if len(self.cfg["owners"]) == 1 else 1):
                a_item, a_cost, a_n, b_item, b_cost, b_n = costs.pop()
                values = {**base, "a_item": a_item, "a_cost": a_cost, "b_item": b_item, "b_cost": b_cost, "total": f"{a_n + b_n:,}"}
                first = self.add_fact(owner, self.fmt(self.rng.choice(T.COSTS["say_a"]), values), topic=("花费" if self.zh else "the costs"))
                second = self.add_fact(owner, self.fmt(self.rng.choice(T.COSTS["say_b"]), values), topic=("花费" if self.zh else "the costs"),
                                       session=self.pick_session(self.by_key[first].session), after=first)
                q, ans = T.COSTS["ask"]
                self.ask("multi-hop", self.fmt(q, values), self.fmt(ans, values), [first, second])
        if self.cfg["compare"]:
            a, b = self.cfg["owners"]
            names = self.cfg["speakers"]
            for kind, question in T.COMPARE:
                (ka, va), (kb, vb) = made[a][kind], made[b][kind]
                measure = (lambda v: NUMBER_WORDS[v["sib"]]) if kind == "siblings" else (lambda v: int(v["km"]))
                winner = names[a] if measure(va) > measure(vb) else names[b]
                detail = (f"{names[a]}: {va['sib']}, {names[b]}: {vb['sib']}" if kind == "siblings"
                          else f"{names[a]}: {va['km']} km, {names[b]}: {vb['km']} km")
                self.ask("multi-hop", question.format(a=names[a], b=names[b]), f"{winner} ({detail})", [ka, kb])

    def build_english_turns(self) -> None:
        owner = self.cfg["owners"][0]
        for text, question, answer in self.T.ENGLISH_TURNS:
            key = self.add_fact(owner, text, react=self.T.REACT_ENGLISH)
            self.ask("cross-language", question, answer, [key], language="zh")

    def choose_cross(self) -> None:
        wanted = self.cfg["cross"] - sum(q.category == "cross-language" for q in self.questions)
        for question in self.rng.sample(self.cross_pool, min(wanted, len(self.cross_pool))):
            self.questions.append(question)

    # Chatter and assembly -----------------------------------------------------------------

    def chatter(self, pool: list, session: int, pos: float) -> Exchange:
        template = self.rng.choice(pool)
        slots = {k: self.rng.choice(v) for k, v in self.T.CHAT_POOLS.items()}
        return Exchange(turns=[(role, text.format(**slots, y="{y}")) for role, text in template], session=session, pos=pos, chatter=True)

    def fill_sessions(self) -> None:
        n, target = self.cfg["sessions"], self.cfg["turns"]
        per = [0] * (n + 1)
        for e in self.exchanges:
            per[e.session] += len(e.turns)
        chat = self.T.CHAT_HUMAN if self.human else self.T.CHAT_ASSISTANT
        greet = self.T.GREET_HUMAN if self.human else self.T.GREET_ASSISTANT
        bye = self.T.BYE_HUMAN if self.human else self.T.BYE_ASSISTANT
        weights = [self.rng.uniform(0.75, 1.25) for _ in range(n)]
        fact_turns = sum(per)
        budget = max(0, target - fact_turns)
        for session in range(1, n + 1):
            self.exchanges.append(self.chatter(greet, session, -1.0))
            self.exchanges.append(self.chatter(bye, session, 2.0))
            per[session] += 4
            share = budget * weights[session - 1] / sum(weights)
            goal = per[session] + share - 4
            deck: list = []
            while per[session] < goal:
                if not deck:
                    deck = list(chat)
                    self.rng.shuffle(deck)
                e = self.chatter([deck.pop()], session, self.rng.random())
                self.exchanges.append(e)
                per[session] += len(e.turns)

    def assemble(self) -> dict:
        cfg, rng = self.cfg, self.rng
        names = cfg["speakers"]
        roles = {"A": "user", "B": "assistant"}
        turns: list[dict] = []
        index_of: dict[str, int] = {}
        sessions = []
        for session in range(1, cfg["sessions"] + 1):
            day = self.dates[session - 1]
            clock = datetime(day.year, day.month, day.day, rng.randint(8, 20), rng.randint(0, 59))
            sessions.append({"session": session, "date": day.isoformat(), "start": clock.isoformat()})
            last = None
            for e in sorted((e for e in self.exchanges if e.session == session), key=lambda e: e.pos):
                if e.chatter:
                    x = "A" if not self.human or last is None else self.other(last)
                    resolved = [(x if r == "X" else self.other(x), t) for r, t in e.turns]
                else:
                    resolved = e.turns
                for n, (speaker, text) in enumerate(resolved):
                    text = text.replace("{y}", names[self.other(speaker)])
                    content = text
                    if self.human:
                        hour = clock.hour % 12 or 12
                        content = f"[{hour}:{clock.minute:02d} {'am' if clock.hour < 12 else 'pm'}] {names[speaker]}: {text}"
                    if e.key is not None and n == 0:
                        index_of[e.key] = len(turns)
                    turns.append({"index": len(turns), "session": session, "role": roles[speaker], "speaker": names[speaker],
                                  "time": clock.isoformat(), "content": content})
                    clock += timedelta(minutes=rng.randint(1, 3), seconds=rng.randint(0, 59))
                    last = speaker
        questions = []
        order = {c: i for i, c in enumerate(CATEGORIES)}
        for q in sorted(self.questions, key=lambda q: order[q.category]):
            questions.append({
                "id": f"{cfg['id']}-q{len(questions) + 1:03d}", "category": q.category, "language": q.language,
                "question": q.question, "answer": q.answer, "evidence": sorted(index_of[k] for k in q.evidence),
            })
        return {
            "id": cfg["id"], "title": cfg["title"], "kind": cfg["kind"], "language": cfg["language"], "user_id": cfg["user_id"],
            "speakers": {"user": names["A"], "assistant": names["B"]}, "sessions": sessions, "turns": turns, "questions": questions,
        }


def build(cfg: dict, seed: int) -> dict:
    rng = random.Random(f"{seed}:{cfg['id']}")
    b = Builder(cfg=cfg, rng=rng)
    day = cfg["start"]
    for _ in range(cfg["sessions"]):
        b.dates.append(day)
        day += timedelta(days=rng.randint(3, 11))
    made = b.build_self()
    b.build_people()
    b.build_events()
    b.build_updates()
    if cfg["deadlines"]:
        b.build_deadlines()
    b.build_multi(made)
    if b.zh:
        b.build_english_turns()
    b.choose_cross()
    b.fill_sessions()
    dialog = b.assemble()
    _validate(dialog)
    return dialog


def _validate(dialog: dict) -> None:
    turns, questions = dialog["turns"], dialog["questions"]
    assert len(turns) >= MIN_TURNS, (dialog["id"], len(turns))
    assert len(questions) >= MIN_QUESTIONS, (dialog["id"], len(questions))
    assert {q["category"] for q in questions} == set(CATEGORIES), dialog["id"]
    seen = set()
    for q in questions:
        assert q["evidence"] and all(0 <= i < len(turns) for i in q["evidence"]), q
        assert q["category"] != "multi-hop" or len(q["evidence"]) >= 2, q
        assert q["question"] not in seen, q["question"]
        seen.add(q["question"])


def render(dialog: dict) -> str:
    return json.dumps(dialog, ensure_ascii=False, indent=1) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description="Write (or --check) the recall corpus.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed file differs from what would be written")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    stale = []
    for cfg in DIALOGS:
        dialog = build(cfg, args.seed)
        path = HERE / f"{cfg['id']}.json"
        text = render(dialog)
        counts = {c: sum(q["category"] == c for q in dialog["questions"]) for c in CATEGORIES}
        print(f"{path.name}: {len(dialog['turns'])} turns in {len(dialog['sessions'])} sessions, "
              f"{len(dialog['questions'])} questions {counts}")
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date: " + ", ".join(stale) + " (run bench/recall_corpus/generate.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
