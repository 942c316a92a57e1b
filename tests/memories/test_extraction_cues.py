"""The English fact rules skip a sentence that holds none of a rule's cues
(`patterns.english._EN_PREDICATES`): that is only sound if no text without a cue can
match the rule. Checked over every English text the repository holds (the
recall corpus, the conversation fixtures, the extraction tests) and over
sentences written for each rule, including letters outside ASCII that a
case-insensitive pattern takes for ASCII ones. Each cue must also be the only
one of its rule in some matched sentence, so none can be dropped unnoticed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memories.extraction.patterns import english as patterns
from memories.extraction.patterns.facts import match_facts
from memories.extraction.patterns.values import USER
from memories.extraction.text import split_sentences
from memories.llm.tokens import content_text

ROOT = Path(__file__).resolve().parents[2]
SPEAKER = USER

# At least one sentence per cue that holds no other cue of its rule, so that
# every cue is shown to be needed (curly apostrophes included).
WRITTEN = [
    "I'm allergic to peanuts.", "My sister has a severe nut allergy.",
    "I live in Denver.", "I reside in Oslo.", "I'm living in Rome.", "We're based in Oslo.", "I'm located in Rome.",
    "Rahul finally packed up and moved to Copenhagen.", "I'm moving to Lisbon.", "I'm relocating to Lisbon.",
    "I work at Acme.", "I'm working for Globex.", "I started at Initech.", "I've joined with Globex.",
    "I no longer work at Acme.", "I'm a software engineer.", "I'm 34 years old.", "I'm 30 yo.",
    "I am vegetarian.", "I'm vegan.", "I'm pescatarian.", "I'm gluten-free.", "I'm keto.",
    "I don't really like coffee.", "I don’t eat meat.", "I do not eat pork.", "I no longer eat meat.",
    "I never eat meat.", "I hate olives.", "I dislike olives.", "I can't stand jazz.", "I detest jazz.",
    "I prefer tea.", "I like tea.", "My brother loves sushi.", "I enjoy hiking.", "I adore cats.",
    "I'd rather have water.", "I’d rather have juice.", "I've switched to oat milk.", "I LIVE IN PARIS.",
    "I DO NOT EAT PORK.", "I'm going to Lisbon.", "I'm travelling to Porto.", "I'm flying to Rome.",
    "I'm heading to Oslo.", "I'm visiting Porto.", "I booked a trip to Porto.",
    # Letters a case-insensitive pattern reads as i, s and k.
    "I lıke green tea.", "I lİke green tea.", "I'm ſwitched to decaf, I've ſwitched to decaf.", "I worK at Acme.",
    "I LİVE İN ROME.",
]


def _english_texts() -> list[str]:
    texts = list(WRITTEN)
    for path in sorted((ROOT / "bench" / "recall_corpus").glob("*.json")):
        corpus = json.loads(path.read_text(encoding="utf-8"))
        if corpus.get("language") == "en":
            texts += [turn["content"] for turn in corpus["turns"]]
    for path in sorted((ROOT / "tests" / "fixtures" / "conversations").glob("en_*.json")):
        texts += [content_text(m["content"]) for m in json.loads(path.read_text(encoding="utf-8"))["messages"]]
    for path in sorted((ROOT / "tests" / "memories").glob("test_extraction*.py")):
        texts += re.findall(r'"([^"\n]{12,})"', path.read_text(encoding="utf-8"))
    return [s for text in texts for s in split_sentences(text)]


SENTENCES = _english_texts()


def test_enough_text_is_checked():
    assert len(SENTENCES) > 1000


@pytest.mark.parametrize(("kind", "cues", "rule"), [rule for rule in patterns._EN_RULES if rule[1]],
                         ids=lambda value: value if isinstance(value, str) else None)
def test_a_rule_matches_only_text_that_holds_one_of_its_cues(kind, cues, rule):
    alone: set[str] = set()  # cues that some matched sentence holds without the rule's others
    for sentence in SENTENCES:
        if rule.search(sentence):
            folded = sentence.translate(patterns._ASCII_LOOKALIKES).lower()
            held = [cue for cue in cues if cue in folded]
            assert held, (kind, sentence)
            if len(held) == 1:
                alone.add(held[0])
    assert alone == set(cues), f"no matched sentence needs {set(cues) - alone} of the {kind} rule"


@pytest.mark.parametrize("sentence", WRITTEN)
def test_the_cues_change_no_fact(sentence, monkeypatch):
    found = match_facts(sentence, SPEAKER)
    monkeypatch.setattr(patterns, "_EN_RULES", [(kind, (), rule) for kind, _, rule in patterns._EN_RULES])
    assert match_facts(sentence, SPEAKER) == found
