"""Rule-based fact recognizers for the offline extractor, English and Chinese.

Each recognizer reads one sentence of one speaker and returns the facts it
states, about the speaker ("I'm allergic to cats"), about someone the speaker
names by relation ("my partner Sam is allergic to peanuts", "my sister lives
in Denver") or by name ("Tom is allergic to peanuts"). A fact has a key made of
its subject and attribute (`user.location`, `person.sam.allergy.peanuts`), so
that a later value of the same key replaces the earlier one: corrections
("changed my mind: aisle seats please", "our budget is now $4,000") reuse the
key on purpose.

Precision comes before recall: only known attributes, relations and
preference objects make facts; an opinion, a request or a clause that merely
looks like "I like ..." makes none.
"""
