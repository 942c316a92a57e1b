"""The network providers keep the extractor's contracts: facts and loops name
every floor they were made from (validated, mapped to message ids), the
summary names its floors, literals come back as the turns wrote them, and the
prompt shows speakers and times without the client prefix."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memories.extraction.types import ExtractionInput, OpenLoopRef, Turn
from memories.llm.base import ExtractionOut, LLMOutputError, to_result
from tests.memories.test_llm_providers import Script, _anthropic, _anthropic_body, _openai, _openai_body

DATA = ExtractionInput(
    previous_summary="Facts: Nate's email is nate@example.com.",
    known_facts=[],
    open_loops=[OpenLoopRef(id="mem_loop1", content="Send the screenplay by Friday", floor_no=1)],
    turns=[
        Turn(floor_no=11, message_id="msg_11", role="user", text="[7:31 pm] Nate: My brother Tom is allergic to peanuts."),
        Turn(floor_no=12, message_id="msg_12", role="assistant", text="[7:32 pm] Joanna: Oh no! Is it severe?"),
        Turn(floor_no=13, message_id="msg_13", role="user",
             text="[7:33 pm] Nate: Very. He carries an EpiPen. Mail me at nate.gamer@example.com by Friday."),
    ],
    previous_summary_sources=["msg_2", "msg_5"],
)
REPLY = {
    "summary": "Nate: his brother Tom is allergic to peanuts and carries an EpiPen; email nate.gamer@example. com.",
    "summary_floors": [11, 13],
    "rolling_summary": "Facts: Tom is allergic to peanuts. Context: Nate: write to nate.gamer@example. com.",
    "facts": [{"key": "person.tom.allergy.peanuts", "value": "peanuts", "content": "Tom is allergic to peanuts",
               "importance": 0.9, "confidence": 0.9, "floor_no": 11, "source_floors": [11, 13]}],
    "open_loops": [{"content": "Mail Nate by Friday", "importance": 0.85, "floor_no": 13}],
    "resolutions": [],
}


def test_to_result_maps_source_floors_to_message_ids_and_restores_literals():
    result = to_result(ExtractionOut.model_validate(REPLY), DATA)
    fact = result.facts[0]
    assert (fact.message_id, fact.message_ids) == ("msg_11", ["msg_11", "msg_13"])
    assert result.open_loops[0].message_ids == ["msg_13"]
    assert result.summary_sources == ["msg_11", "msg_13"]
    assert result.rolling_sources == ["msg_2", "msg_5", "msg_11", "msg_13"]
    assert "nate.gamer@example.com" in result.summary and "nate.gamer@example.com" in result.rolling_summary
    assert "example. com" not in result.summary


def test_a_summary_without_floors_is_credited_with_every_conversation_turn():
    reply = {**REPLY, "summary_floors": [], "facts": [], "open_loops": []}
    result = to_result(ExtractionOut.model_validate(reply), DATA)
    assert result.summary_sources == ["msg_11", "msg_12", "msg_13"]


@pytest.mark.parametrize("change", [
    {"facts": [{**REPLY["facts"][0], "source_floors": [11, 99]}]},
    {"open_loops": [{"content": "x", "floor_no": 13, "source_floors": [4]}]},
    {"summary_floors": [10]},
])
def test_floors_outside_the_batch_are_refused(change):
    with pytest.raises(ValueError, match="not one of"):
        to_result(ExtractionOut.model_validate({**REPLY, **change}), DATA)


@pytest.mark.parametrize("make,body", [(_openai, _openai_body), (_anthropic, _anthropic_body)])
def test_providers_send_speakers_and_the_schema_and_ask_again_for_bad_sources(make, body):
    bad = {**REPLY, "facts": [{**REPLY["facts"][0], "source_floors": [42]}]}
    script = Script([(200, body(json.dumps(bad))), (200, body(json.dumps(REPLY)))])
    result, _usage = make(script).extract(DATA)
    assert result.facts[0].message_ids == ["msg_11", "msg_13"]
    first = script.requests[0].content.decode()
    sent = json.loads(first)
    text = json.dumps(sent, ensure_ascii=False)
    assert "\\n11 Nate: My brother Tom is allergic to peanuts." in text
    assert "[7:31 pm] Nate:" not in text  # the client prefix is read, not repeated
    assert "two people; speakers Nate (user), Joanna (assistant)" in text
    assert "source_floors" in text and "summary_floors" in text and "SAME key" in text
    assert "floor 42" in script.requests[1].content.decode()  # the correction quotes the rejection


@pytest.mark.parametrize("make,body", [(_openai, _openai_body), (_anthropic, _anthropic_body)])
def test_schema_failures_still_fail_clearly(make, body):
    bad = {**REPLY, "summary_floors": [1]}
    script = Script([(200, body(json.dumps(bad)))] * 3)
    with pytest.raises(LLMOutputError):
        make(script).extract(DATA)


def test_compaction_restores_literals_the_model_spaced_out():
    script = Script([(200, _openai_body(json.dumps({"summary": "Nate: email nate.gamer@example. com; v2. 3.1 ships."})))])
    text, _usage = _openai(script).compact(["Nate: email nate.gamer@example.com.", "Joanna: v2.3.1 ships."])
    assert text == "Nate: email nate.gamer@example.com; v2.3.1 ships."


def test_a_loop_the_model_wrote_carries_the_day_it_is_due():
    """'by Friday', counted from the day its turn was said; an ISO day as written."""
    said = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)  # a Tuesday
    turns = [Turn(floor_no=t.floor_no, message_id=t.message_id, role=t.role, text=t.text, created_at=said)
             for t in DATA.turns]
    data = ExtractionInput(previous_summary="", known_facts=[], open_loops=[], turns=turns)
    reply = {**REPLY, "open_loops": [{"content": "Mail Nate by Friday", "floor_no": 13},
                                     {"content": "Renew the passport (due 2027-01-15)", "floor_no": 11},
                                     {"content": "Call the bank", "floor_no": 11}]}
    result = to_result(ExtractionOut.model_validate(reply), data)
    assert [loop.due_date.isoformat() if loop.due_date else None for loop in result.open_loops] == [
        "2026-11-27", "2027-01-15", None]
