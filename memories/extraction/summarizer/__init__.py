"""Extractive summaries that follow the summary convention's four rules:
keep facts, preferences, open tasks and context; drop greetings,
acknowledgements, repetition and tool-call detail; write in the conversation's
own language; stay within 500 characters.

A summary is written in sections ("Facts: ... Open tasks: ... Context: ..." or
"事实：… 待办：… 背景：…") so that a later merge (the rolling summary, a macro
summary) can re-read its parts. Each context sentence keeps its speaker
("Nate: ...", "User: ..."); sentences of one speaker in a row share the label,
and a re-read gives each of them that speaker again. Text written by another
provider, without sections, is read back as context sentences.

Literals (e-mails, URLs, numbers, code) pass through untouched: sentences are
split and clipped around them, never inside.
"""
