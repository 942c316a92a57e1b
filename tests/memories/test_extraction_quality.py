"""What the offline extractor makes of a conversation, read as a user would:
client prefixes, both speakers of a human dialog, facts about third parties,
corrections that keep their key, deadline requests, speakers and literals in
summaries, the conversation's language, and the messages each item came from.

Pure functions: no database, no network. Every test runs twice: on the
offline extractor, and on the network provider's path (the prompt a hosted
model is sent, answered by the scripted model that reads the batch back out
of it): whatever the prompt leaves out, the second run misses.)"""

from __future__ import annotations

import re
import sys

import pytest

from memories.extraction.dialog import ASSISTANT, HUMAN, dialog_mode, prepare_turns
from memories.extraction.extractor import compact, extract
from memories.extraction.patterns.facts import match_facts
from memories.extraction.summarizer.merging import merge_summaries
from memories.extraction.summarizer.scoring import score_sentence
from memories.extraction.summarizer.sections import parse_sections
from memories.extraction.tasks import match_task
from memories.extraction.text import clip, is_small_talk, parse_turn_prefix, split_sentences
from memories.extraction.types import (
    ExtractedFact,
    ExtractedLoop,
    ExtractionInput,
    ExtractionResult,
    KnownFact,
    OpenLoopRef,
    Turn,
)
from tests.memories.pipeline_helpers import ScriptedModel, load_fixture


@pytest.fixture(autouse=True, params=["offline", "network"])
def extraction_path(request, monkeypatch):
    if request.param == "network":
        provider = ScriptedModel().provider()
        monkeypatch.setattr(sys.modules[__name__], "extract", lambda data: provider.extract(data)[0])
    return request.param


def turns_of(messages: list[tuple[str, str]], start: int = 1) -> list[Turn]:
    return [Turn(floor_no=start + i, message_id=f"msg_{start + i}", role=role, text=text)
            for i, (role, text) in enumerate(messages)]


def run(messages: list[tuple[str, str]], **kwargs) -> ExtractionResult:
    data = ExtractionInput(previous_summary="", known_facts=[], open_loops=[], turns=turns_of(messages))
    for name, value in kwargs.items():
        setattr(data, name, value)
    return extract(data)


def without_due(text: str) -> str:
    """A task without the due date it was given (counted from today)."""
    return re.sub(r" \(due \d{4}-\d\d-\d\d\)|（截止 \d{4}-\d\d-\d\d）", "", text)


def fixture_turns(name: str) -> list[Turn]:
    turns = []
    for index, message in enumerate(load_fixture(name)["messages"], 1):
        content = message["content"]
        if isinstance(content, list):
            content = "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
        turns.append(Turn(floor_no=index, message_id=f"msg_{index}", role=message["role"], text=content))
    return turns


class Store:
    """What the pipeline keeps between batches, as the writer keeps it: a
    newer value of a key replaces the older one; closed loops drop out."""

    def __init__(self) -> None:
        self.facts: dict[str, ExtractedFact] = {}
        self.replaced: list[tuple[ExtractedFact, ExtractedFact]] = []
        self.loops: dict[str, ExtractedLoop] = {}
        self.rolling = ""
        self.rolling_sources: list[str] = []
        self.micros: list[str] = []
        self.results: list[ExtractionResult] = []

    def feed(self, turns: list[Turn]) -> ExtractionResult:
        data = ExtractionInput(
            previous_summary=self.rolling,
            known_facts=[KnownFact(id=f"mem_{k}", key=k, content=f.content) for k, f in self.facts.items()],
            open_loops=[OpenLoopRef(id=i, content=loop.content, floor_no=loop.floor_no) for i, loop in self.loops.items()],
            turns=turns,
            previous_summary_sources=self.rolling_sources,
        )
        result = extract(data)
        for fact in result.facts:
            old = self.facts.get(fact.key)
            if old is not None and old.content != fact.content:
                self.replaced.append((old, fact))
            self.facts[fact.key] = fact
        refs = {}
        for loop in result.open_loops:
            refs[loop.ref] = f"mem_loop_{len(self.loops)}_{loop.floor_no}"
            self.loops[refs[loop.ref]] = loop
        for resolution in result.resolutions:
            self.loops.pop(refs.get(resolution.target, resolution.target), None)
        self.rolling, self.rolling_sources = result.rolling_summary, result.rolling_sources
        self.micros.append(result.summary)
        self.results.append(result)
        return result


def feed_all(turns: list[Turn], batch: int) -> Store:
    store = Store()
    for start in range(0, len(turns), batch):
        store.feed(turns[start:start + batch])
    return store


# --- Client prefixes --------------------------------------------------------------


@pytest.mark.parametrize("text,speaker,time_text,body", [
    ("[7:31 pm] Nate: Thanks! I won my first tournament.", "Nate", "7:31 pm", "Thanks! I won my first tournament."),
    ("[2023-05-08 13:56] Nate: hi there", "Nate", "2023-05-08 13:56", "hi there"),
    ("[1:56 pm on 8 May, 2023] Caroline: Hey Mel!", "Caroline", "1:56 pm on 8 May, 2023", "Hey Mel!"),
    ("Joanna (7:31 pm): yo", "Joanna", "7:31 pm", "yo"),
    ("12:30 Nate: hi", "Nate", "12:30", "hi"),
    ("Nate: hello", "Nate", None, "hello"),
    ("小明：你好", "小明", None, "你好"),
    ("[7:31 pm] I am back.", None, "7:31 pm", "I am back."),
    ("Update: I moved to Portland", None, None, "Update: I moved to Portland"),
    ("Good news: I renewed my passport", None, None, "Good news: I renewed my passport"),
    ("Noted: window seats.", None, None, "Noted: window seats."),
    ("注意：明天开会", None, None, "注意：明天开会"),
    ("See https://example.com: it works", None, None, "See https://example.com: it works"),
])
def test_parse_turn_prefix(text, speaker, time_text, body):
    assert parse_turn_prefix(text) == (speaker, time_text, body)


def test_a_bare_name_prefix_counts_only_when_the_batch_uses_such_prefixes():
    single = prepare_turns(turns_of([("user", "Tom: is the name of my cat"), ("assistant", "Nice cat.")]))
    assert single[0].speaker is None and single[0].text == "Tom: is the name of my cat"
    dialog = prepare_turns(turns_of([("user", "Nate: hey"), ("assistant", "Joanna: hi"), ("user", "Nate: how are you?")]))
    assert [t.speaker for t in dialog] == ["Nate", "Joanna", "Nate"]
    assert [t.text for t in dialog] == ["hey", "hi", "how are you?"]
    # The original ids, floors and roles stay; tool and system turns are not conversation.
    mixed = prepare_turns(turns_of([("system", "be nice"), ("user", "[9:00 am] Nate: morning"), ("tool", "{}")]))
    assert [(t.floor_no, t.message_id, t.role, t.time_text) for t in mixed] == [(2, "msg_2", "user", "9:00 am")]


def test_a_prefix_neither_defeats_the_small_talk_filter_nor_earns_a_detail_bonus():
    result = run([
        ("user", "[7:31 pm] Nate: Hey Joanna! Long time no talk."),
        ("assistant", "[7:32 pm] Joanna: Hi Nate! How have you been?"),
        ("user", "[7:32 pm] Nate: Thanks! Pretty good. I won my first video game tournament last week."),
        ("assistant", "[7:33 pm] Joanna: No way, congrats! Which game was it?"),
        ("user", "[7:34 pm] Nate: lol ok"),
    ])
    assert "I won my first video game tournament last week" in result.summary
    for noise in ("Thanks", "7:31", "7:32", "[", "lol ok", "Pretty good", "Long time no talk"):
        assert noise not in result.summary
    # The speaker is named, by name, at the start of his sentence.
    assert result.summary.startswith("Context: Nate: ")


# --- Who is talking ---------------------------------------------------------------


def test_dialog_mode_tells_two_people_from_a_user_and_an_assistant():
    friends = prepare_turns(fixture_turns("en_two_friends"))
    assert dialog_mode(friends) == HUMAN
    # Without the client's prefixes, both roles still write like people.
    unnamed = [Turn(t.floor_no, t.message_id, t.role, t.text) for t in friends]
    assert dialog_mode(unnamed) == HUMAN
    for name in ("en_new_user_travel", "en_travel_planning", "zh_work_assistant"):
        assert dialog_mode(prepare_turns(fixture_turns(name))) == ASSISTANT


def test_no_role_is_penalised_in_a_human_dialog():
    sentence = "I finished the first draft of my screenplay on Sunday."
    as_user = score_sentence(sentence, role="user", human=True, position=0.5)
    as_other = score_sentence(sentence, role="assistant", human=True, position=0.5)
    assert as_user == as_other
    # An informative sentence outranks an acknowledgement whatever the role.
    thanks = score_sentence("Thanks, got it.", role="user", human=True, position=1.0)
    assert as_other > thanks
    result = run([
        ("user", "[7:31 pm] Nate: Hey, what's up?"),
        ("assistant", "[7:35 pm] Joanna: I finished the first draft of my screenplay on Sunday."),
        ("user", "[7:36 pm] Nate: Wow."),
    ])
    assert "Joanna: I finished the first draft of my screenplay on Sunday." in result.summary


def test_every_summary_sentence_keeps_its_speaker_through_merges():
    result = run([
        ("user", "[7:34 pm] Nate: It was a Street Fighter 6 tournament in Tampa. There were 64 players."),
        ("assistant", "[7:35 pm] Joanna: I finished my screenplay. It is about a lighthouse in Maine."),
    ])
    context = parse_sections(result.summary)["context"]
    assert context == [
        "Nate: It was a Street Fighter 6 tournament in Tampa.", "Nate: There were 64 players.",
        "Joanna: I finished my screenplay.", "Joanna: It is about a lighthouse in Maine.",
    ]
    merged = merge_summaries([result.summary, "Context: Nate: I adopted a turtle named Shelly."])
    assert parse_sections(merged)["context"][-3:] == [
        "Joanna: I finished my screenplay.", "Joanna: It is about a lighthouse in Maine.",
        "Nate: I adopted a turtle named Shelly.",
    ]


def test_the_user_is_called_by_name_once_the_name_is_known():
    result = run([("user", "Hi! I'm Maya, first time here."), ("assistant", "Welcome, Maya!"),
                  ("user", "Any ideas for a week in Lisbon in June?")])
    assert "Maya: Any ideas for a week in Lisbon in June?" in parse_sections(result.summary)["context"]
    assert "User:" not in result.summary and "Welcome" not in result.summary


# --- Facts --------------------------------------------------------------------------


def test_facts_come_from_both_speakers_and_about_third_parties():
    store = feed_all(fixture_turns("en_two_friends"), 6)
    facts = {key: fact.content for key, fact in store.facts.items()}
    assert facts["person.nate.allergy.cats"] == "Nate is allergic to cats"
    assert facts["person.tom.allergy.peanuts"] == "Joanna's brother Tom is allergic to peanuts"
    assert facts["person.joanna.sister.location"] == "Joanna's sister lives in Denver"
    assert facts["person.nate.email"] == "Nate's email is nate.gamer@example.com"
    assert facts["person.nate.moving_to"] == "Nate is moving to Orlando in May"
    # Joanna (the "assistant" role) stated the last three of these.
    assert store.facts["person.tom.allergy.peanuts"].message_id == "msg_14"
    assert not any("thought" in content or "Nate would" in content for content in facts.values())


@pytest.mark.parametrize("sentence,key,content", [
    ("Tom is allergic to peanuts.", "person.tom.allergy.peanuts", "Tom is allergic to peanuts"),
    ("One important thing: my partner Sam is allergic to peanuts.", "person.sam.allergy.peanuts",
     "User's partner Sam is allergic to peanuts"),
    ("My sister lives in Denver.", "user.sister.location", "User's sister lives in Denver"),
    ("My name is Maya Patel and I live in Seattle.", "user.name", "User's name is Maya Patel"),
    ("Our budget is $3,000 for the two of us.", "user.budget", "User's budget is $3,000"),
    ("Also my phone number is +1 617 555 0142 in case the hotel needs it.", "user.phone",
     "User's phone number is +1 617 555 0142"),
    ("My locker code is 4242.", "user.locker_code", "User's locker code is 4242"),
    ("I prefer trains over flights when I travel.", "user.preference.transport", "User prefers trains"),
    ("我老婆对花生过敏。", "user.wife.allergy.花生", "用户的老婆对花生过敏"),
    ("Kofi is seriously allergic to tree nuts, so no nuts this weekend.", "person.kofi.allergy.tree_nuts",
     "Kofi is allergic to tree nuts"),
    ("Rahul finally packed up and moved to Copenhagen.", "person.rahul.location", "Rahul lives in Copenhagen"),
    ("You can always reach me at hollowtree88@aol.com.", "user.email", "User's email is hollowtree88@aol.com"),
    ("New email address, by the way: sunny.hollis@fastmail.com.", "user.email",
     "User's email is sunny.hollis@fastmail.com"),
    ("I no longer use old@aol.com; write to m.ferris@pm.me instead.", "user.email", "User's email is m.ferris@pm.me"),
    ("I finally put my recipes online at https://trailnotes.net/rosa if you want.", "user.website",
     "User's website is https://trailnotes.net/rosa"),
    ("I started at Lumen Health last week.", "user.employer", "User works at Lumen Health"),
    ("Actually I switched to being vegetarian, vegan got too hard.", "user.preference.diet", "User's diet: vegetarian"),
    ("For the invitation, our place is 221 Alder Street, apartment 3B.", "user.address",
     "User's address is 221 Alder Street, apartment 3B"),
    ("今天又加班到九点，在筑境设计院做建筑设计师真的太累了。", "user.occupation", "用户是建筑设计师"),
])
def test_facts_about_the_speaker_and_the_people_they_name(sentence, key, content):
    facts = {f.key: f.content for f in match_facts(sentence)}
    assert facts.get(key) == content


@pytest.mark.parametrize("sentence", [
    "I thought Nate would never hike, right?", "I like your idea.", "I'd like a hotel.", "I love that!",
    "My question is whether it rains.", "I'm Canadian.", "Chiado sounds good.", "Porto is 3 hours by train.",
    "My day is going well.", "I'm living in fear of the exam.", "Sam gets up a lot.", "My guess is Tuesday.",
    "My lips are sealed.", "My place is a mess.", "I work at home.",
    "I changed my mind about the kitchen, we're going with sage green rather than sunflower yellow.",
])
def test_no_junk_facts(sentence):
    assert match_facts(sentence) == []


def test_importance_follows_what_a_fact_is():
    def importance(sentence: str) -> float:
        return match_facts(sentence)[0].importance

    assert importance("My name is Maya.") >= 0.85
    assert importance("Tom is allergic to peanuts.") >= 0.85
    assert importance("My email is maya@example.com.") >= 0.8
    assert importance("I like palaces.") <= 0.6 < importance("I live in Lisbon.")
    result = run([("user", "Please book the hotel by Friday."), ("user", "I also need to call the bank.")])
    assert [loop.importance for loop in result.open_loops] == [0.85, 0.7]


# --- Corrections ------------------------------------------------------------------


def test_corrections_reuse_the_key_of_the_value_they_replace():
    store = Store()
    store.feed(turns_of([("user", "I prefer window seats on long flights."), ("user", "Our budget is $3,000."),
                         ("user", "I like coffee in the morning."), ("user", "I live in Lisbon.")]))
    store.feed(turns_of([
        ("user", "I changed my mind about seats: aisle seats please, Sam gets up a lot."),
        ("user", "Good news: Sam got a bonus, so our budget is now $4,000."),
        ("user", "I no longer drink coffee."),
        ("user", "Actually, I live in Porto now."),
    ], start=5))
    replaced = {old.key: (old.content, new.content) for old, new in store.replaced}
    assert replaced == {
        "user.preference.seat": ("User prefers window seats on long flights", "User prefers aisle seats"),
        "user.budget": ("User's budget is $3,000", "User's budget is $4,000"),
        "user.preference.drink": ("User likes coffee in the morning", "User no longer likes coffee"),
        "user.location": ("User lives in Lisbon", "User lives in Porto"),
    }


@pytest.mark.parametrize("sentence,key,value", [
    ("Actually, make it green tea instead of coffee.", "user.preference.drink", "green tea"),
    ("I'd like aisle seats rather than window seats.", "user.preference.seat", "aisle seats"),
    ("Please change my email to maya.patel@example.org, the old one is closing.", "user.email",
     "maya.patel@example.org"),
    ("我改主意了，改成靠过道的座位吧。", "user.preference.seat", "靠过道"),
])
def test_correction_wordings(sentence, key, value):
    facts = {f.key: f.value for f in match_facts(sentence)}
    assert facts.get(key) == value


def test_no_longer_keeps_its_own_key_when_nothing_said_that_value():
    store = Store()
    store.feed(turns_of([("user", "I like tea.")]))
    store.feed(turns_of([("user", "I no longer drink coffee.")], start=2))
    assert store.facts["user.preference.drink"].content == "User likes tea"  # not replaced by a coffee fact


# --- Open loops ----------------------------------------------------------------------


@pytest.mark.parametrize("sentence,task", [
    ("Please book Casa do Barao by Friday, it fills up fast.", "book Casa do Barao by Friday"),
    ("Remind me to buy the Pena Palace tickets before June 3.", "buy the Pena Palace tickets before June 3"),
    ("Could you send the invoice to Tom before the 12th?", "send the invoice to Tom before the 12th"),
    ("Can you suggest neighbourhoods to stay in?", None),
    ("Can you find flights on June 3?", None),
    ("Please change my email to maya@example.org.", None),
    ("请提醒我周五之前提交季度报告。", "周五之前提交季度报告"),
    ("记得提醒我1月17日前给猫预约打疫苗，医院很难约。", "1月17日前给猫预约打疫苗"),
    ("帮我记着，3月17日之前要订好生日蛋糕。", "3月17日之前要订好生日蛋糕"),
    ("帮我写一句婉拒会议的话。", None),
    ("点外卖的时候记得备注，我一碰虾就起疹子。", None),
])
def test_requests_with_a_deadline_open_loops(sentence, task):
    assert match_task(sentence) == task


def test_a_loop_restated_is_one_loop_made_from_both_messages():
    result = run([("user", "Remind me to buy the Pena Palace tickets before June 3."),
                  ("assistant", "Sure."),
                  ("user", "Don't let me forget: buy the Pena Palace tickets before June 3!")])
    assert len(result.open_loops) == 1
    assert result.open_loops[0].message_ids == ["msg_1", "msg_3"]


# --- Literals and language -------------------------------------------------------------


LITERALS = ["maya@example.com", "https://www.parquesdesintra.pt/tickets?day=2024-06-03", "v2.3.1", "3.5", "$4,000",
            "`pip install memsvc==2.3.1`", "+1 617 555 0142"]


def test_literals_survive_splitting_summaries_rolling_and_compaction():
    messages = [
        ("user", "My email is maya@example.com. Book at https://www.parquesdesintra.pt/tickets?day=2024-06-03."),
        ("assistant", "Version v2.3.1 of the app needs 3.5 GB. Run `pip install memsvc==2.3.1` first."),
        ("user", "Our budget is now $4,000. Call +1 617 555 0142 if needed."),
    ]
    for _role, text in messages:
        joined = " ".join(split_sentences(text))
        assert joined == text
    result = run(messages)
    texts = [result.summary, result.rolling_summary]
    micros = []
    for i in range(4):  # several micros of the same span, merged the way compaction merges them
        micros.append(run(messages[i % 3:] + messages[:i % 3]).summary)
    texts.append(compact(micros))
    texts.append(merge_summaries([result.rolling_summary] * 3))
    for text in texts:
        for literal in ("maya@example.com", "v2.3.1", "$4,000"):
            assert literal in text or literal not in " ".join(t for _, t in messages)
        assert not re.search(r"\w\. (?:com|org|pt|1)\b", text), text  # no space inserted after a dot
    assert "maya@example.com" in result.summary and "$4,000" in result.summary


def test_clip_never_cuts_inside_a_literal():
    text = "See " + "x" * 480 + " https://example.com/a/b/c?d=1 and maya@example.com"
    clipped = clip(text, 500)
    assert len(clipped) <= 500
    assert "https://example.com/a" not in clipped or "https://example.com/a/b/c?d=1" in clipped


def test_a_chinese_conversation_is_summarized_in_chinese_with_chinese_labels():
    store = feed_all(fixture_turns("zh_work_assistant"), 6)
    for text in [*store.micros, store.rolling, compact(store.micros)]:
        assert not re.search(r"\b(?:User|Assistant|Facts|Open tasks|Done|Context):", text), text
        assert len(text) <= 500
    assert "上海" in store.rolling and "fang.wang@example.com" in store.rolling
    # The old city is a replaced value: the rolling summary says it only as
    # what the new one replaced.
    assert "用户住在上海（原为杭州）" in store.rolling and "杭州" not in store.rolling.replace("（原为杭州）", "")
    # An English fact stated in a Chinese conversation is written in Chinese in its summary.
    result = run([("user", "我下周去东京出差，需要订酒店。"), ("user", "我的邮箱是a@b.cn。"),
                  ("user", "My partner Sam is allergic to peanuts."), ("user", "请提醒我周五之前提交报告。")])
    assert result.language == "zh"
    assert "用户的伴侣Sam对peanuts过敏" in result.summary and "User's" not in result.summary


def test_small_talk():
    for sentence in ("Thanks!", "lol ok", "Haha I know.", "Wow, what's it about?", "Bye Nate!", "Welcome, Maya!",
                     "Have a wonderful trip, Maya!", "好的", "谢谢！"):
        assert is_small_talk(sentence), sentence
    for sentence in ("I won my first video game tournament last week.", "Sam loves palaces.", "Thanks, I live in Oslo."):
        assert not is_small_talk(sentence), sentence


# --- Provenance -------------------------------------------------------------------------


def test_old_call_sites_keep_working():
    turn = Turn(floor_no=1, message_id="msg_1", role="user", text="I live in Oslo.")
    assert turn.created_at is None and turn.speaker is None
    fact = ExtractedFact(key="k", value="v", content="c", importance=0.5, confidence=0.5, floor_no=1, message_id="m")
    loop = ExtractedLoop(ref="new:0", content="c", importance=0.5, floor_no=1, message_id="m")
    assert fact.message_ids == ["m"] and loop.message_ids == ["m"]
    data = ExtractionInput(previous_summary="", known_facts=[], open_loops=[], turns=[turn])
    assert data.previous_summary_sources == []
    assert ExtractionResult(language="en", summary="", rolling_summary="").summary_sources == []


def test_summary_sources_name_every_contributing_message_and_only_those():
    result = run([
        ("user", "My name is Maya Patel."),                      # a fact
        ("assistant", "Hello Maya!"),                            # small talk
        ("user", "Please book the ryokan in Kyoto by Friday."),  # a task
        ("tool", '{"results": []}'),
        ("assistant", "The Shinkansen from Tokyo to Kyoto takes 2 hours 15 minutes."),  # context
        ("user", "ok"),                                          # small talk, and the batch's last message
    ])
    assert result.summary_sources == ["msg_1", "msg_3", "msg_5"]
    assert result.facts[0].message_ids == ["msg_1"] and result.open_loops[0].message_ids == ["msg_3"]
    assert set(result.rolling_sources) == {"msg_1", "msg_3", "msg_5"}


def test_rolling_sources_carry_the_previous_summary_sources():
    store = Store()
    first = store.feed(turns_of([("user", "I live in Lisbon."), ("user", "I adopted a turtle named Shelly.")]))
    second = store.feed(turns_of([("user", "My sister lives in Porto.")], start=3))
    assert set(first.rolling_sources) == {"msg_1", "msg_2"}
    assert second.rolling_sources[:2] == first.rolling_sources and "msg_3" in second.rolling_sources


def test_a_resolution_credits_the_closing_message():
    data = ExtractionInput(previous_summary="", known_facts=[],
                           open_loops=[OpenLoopRef(id="mem_1", content="To do: renew my passport before March", floor_no=2)],
                           turns=turns_of([("user", "Good news: I renewed my passport yesterday.")], start=9))
    result = extract(data)
    assert [(r.target, r.message_id) for r in result.resolutions] == [("mem_1", "msg_9")]
    assert "Done: renew my passport before March" in result.summary and result.summary_sources == ["msg_9"]


# --- The new user's travel chat, end to end -----------------------------------------------


@pytest.mark.parametrize("batch", [6, 10, 50])
def test_new_user_travel_chat(batch):
    store = feed_all(fixture_turns("en_new_user_travel"), batch)
    facts = {key: fact.content for key, fact in store.facts.items()}
    assert facts["user.name"] == "User's name is Maya"
    assert facts["person.sam.allergy.peanuts"] == "User's partner Sam is allergic to peanuts"
    assert facts["user.budget"] == "User's budget is $4,000"
    assert facts["user.preference.seat"] == "User prefers aisle seats"
    assert facts["user.email"] == "User's email is maya@example.com"
    replaced = {(old.key, old.content) for old, _ in store.replaced}
    assert ("user.preference.seat", "User prefers window seats on long flights") in replaced
    assert ("user.budget", "User's budget is $3,000") in replaced
    assert sorted(without_due(loop.content) for loop in store.loops.values()) == [
        "To do: book Casa do Barao by Friday", "To do: buy the Pena Palace tickets before June 3"]
    assert all(fact.importance >= 0.85 for key, fact in store.facts.items() if key.endswith(("name", "peanuts")))
    # No fact is made of chatter, and every fact's source is the message that said it.
    floors = {t.message_id: t.text for t in fixture_turns("en_new_user_travel")}
    for fact in store.facts.values():
        assert fact.message_ids and all(mid in floors for mid in fact.message_ids)
        assert fact.value.split()[0].strip("$+") in floors[fact.message_id]
    macro = compact(store.micros)
    for text in [*store.micros, store.rolling, macro]:
        assert len(text) <= 500 and "example. com" not in text and "Thanks!" not in text
    assert "maya@example.com" in store.rolling and "allergic to peanuts" in store.rolling
    # The replaced seat is said only as what the new one replaced.
    assert "User prefers aisle seats (changed from window seats on long flights)" in store.rolling
    assert "window seats" not in store.rolling.replace("(changed from window seats on long flights)", "")


def test_a_chinese_dialog_between_two_people():
    result = run([
        ("user", "[19:31] 小明：嗨，好久不见！"), ("assistant", "[19:32] 小红：是啊！最近怎么样？"),
        ("user", "[19:33] 小明：挺好的，我上周赢了第一场电竞比赛，奖金3000元。"),
        ("assistant", "[19:34] 小红：太厉害了！我妹妹住在成都，她也爱玩游戏。"),
        ("user", "[19:35] 小明：我对猫过敏，所以没养猫。"), ("assistant", "[19:36] 小红：哈哈"),
    ])
    facts = {f.key: (f.content, f.message_ids) for f in result.facts}
    assert facts["person.小明.allergy.猫"] == ("小明对猫过敏", ["msg_5"])
    assert facts["person.小红.sister.location"] == ("小红的妹妹住在成都", ["msg_4"])
    assert "小明：挺好的，我上周赢了第一场电竞比赛，奖金3000元。" in result.summary
    assert "好久不见" not in result.summary and "19:3" not in result.summary and "用户" not in result.summary
    assert result.summary_sources == ["msg_3", "msg_4", "msg_5"]


# --- A travel chat that changes its mind (English and Chinese) -----------------------------


@pytest.mark.parametrize("batch", [6, 11, 50])
def test_travel_chat_that_changes_its_mind(batch):
    store = feed_all(fixture_turns("en_travel_changes"), batch)
    facts = {key: fact.content for key, fact in store.facts.items()}
    assert facts["user.name"] == "User's name is Dana"
    assert facts["user.occupation"] == "User works as nurse" and facts["user.employer"] == "User works at Mercy Hospital"
    assert facts["user.trip.destination"] == "User is travelling to Lisbon"
    assert facts["user.trip.dates"] == "User's trip is from May 12 to May 19"
    assert facts["user.budget"] == "User's budget is $3,000"
    # The first statement of the seat is extracted, and each correction
    # replaces that attribute and nothing else.
    assert facts["user.preference.seat"] == "User prefers window seats"
    seat_history = [(old.content, new.content) for old, new in store.replaced if old.key == "user.preference.seat"]
    assert seat_history == [("User prefers window seats on flights", "User prefers aisle seats"),
                            ("User prefers aisle seats", "User prefers window seats")]
    assert {old.key for old, _ in store.replaced} <= {"user.preference.seat", "user.budget"}
    # An airline's and a hotel's preference have keys of their own.
    assert facts["user.preference.airline"] == "User prefers TAP"
    assert facts["user.preference.hotel"] == "User prefers small boutique places"
    # One fact per attribute and subject, the partner labelled as such.
    assert [key for key in facts if "allerg" in key] == ["person.tom.allergy.peanuts"]
    assert facts["person.tom.allergy.peanuts"] == "User's partner Tom is allergic to peanuts"
    assert facts["person.tom.preference.diet"] == "Tom's diet: vegetarian"
    # No junk.
    assert not any(re.search(r"rigid|dates is|\.tap$", f"{key} {content}") for key, content in facts.items())
    # Requests with a date are open loops with a due date; Tom's task is his.
    loops = sorted(loop.content for loop in store.loops.values())
    assert [without_due(loop) for loop in loops] == [
        "To do: book the hotel by Friday", "To do: buy the Pena Palace tickets by May 5",
        "To do: renew his passport before April 30 (Tom)", "To do: send me the itinerary by Sunday"]
    assert all(re.search(r"\(due \d{4}-\d\d-\d\d\)$", loop) for loop in loops)
    assert any(loop.endswith("-04-30)") for loop in loops) and any(loop.endswith("-05-05)") for loop in loops)
    # The rolling summary keeps the destination, the dates and the changes of mind.
    for said in ["Lisbon", "May 12 to May 19", "User prefers window seats (changed from aisle seats)",
                 "allergic to peanuts"]:
        assert said in store.rolling, said
    assert len(store.rolling) <= 500


@pytest.mark.parametrize("batch", [6, 50])
def test_chinese_travel_chat_that_changes_its_mind(batch):
    store = feed_all(fixture_turns("zh_travel_changes"), batch)
    facts = {key: fact.content for key, fact in store.facts.items()}
    assert facts["user.name"] == "用户叫李娜"  # "我的中文名字是李娜": a name, not `user.中文名字`
    assert not any("名字" in key for key in facts)
    assert facts["user.occupation"] == "用户是护士"
    assert facts["user.trip.destination"] == "用户要去成都"
    assert facts["user.trip.dates"] == "用户的行程是5月12日到5月19日"
    assert facts["user.budget"] == "用户的预算是10000元"
    assert facts["user.preference.seat"] == "用户喜欢靠窗"
    assert [(old.content, new.content) for old, new in store.replaced if old.key == "user.preference.seat"] == [
        ("用户喜欢靠窗的座位", "用户喜欢靠过道"), ("用户喜欢靠过道", "用户喜欢靠窗")]
    assert facts["user.preference.airline"] == "用户喜欢国航"
    assert facts["user.preference.hotel"] == "用户喜欢安静的民宿"
    assert facts["person.小王.allergy.花生"] == "用户的老公小王对花生过敏"
    assert [key for key in facts if "allergy" in key] == ["person.小王.allergy.花生"]
    loops = sorted(without_due(loop.content) for loop in store.loops.values())
    assert "待办：在4月30日前办好身份证（小王）" in loops and len(loops) == 4
    assert all("（截止 " in loop.content for loop in store.loops.values())
    for said in ["成都", "5月12日到5月19日", "用户喜欢靠窗（原为靠过道）", "花生"]:
        assert said in store.rolling, said
