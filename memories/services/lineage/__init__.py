"""Erasure that follows lineage: when text goes away, so does everything made from it.

A derived memory records where it came from: `sources` (the message ids it was
made from), `source_memory_ids` (for a macro summary, the memories it
compacts) and `source_job` (the extraction that wrote it, whose scope id is a
branch scope). A branch scope's rolling summary records `rolling_sources`.
When a message is edited or deleted, a conversation cleared, deleted or
expired, a memory deleted or one of its versions redacted, this package

1. finds every memory derived from the affected text, through those links
   (a fixpoint: a macro of a macro of a deleted micro goes too);
2. deletes them and redacts all of their versions (a deletion that left the
   text in an old version would not be an erasure), scrubbing copies in the
   admin log and job payloads (`memories.services.redaction`);
3. clears the rolling summaries that drew on the text (scope state and the
   conversation's metadata);
4. drops or rebuilds the recall passages (and so their vectors) of the
   affected messages, and purges the full-text indexes;
5. queues a re-derivation of what remains: for a branch scope, a rebuild job
   from the lowest affected floor (`rederive_run`); for memories compacted
   into a deleted macro, the sources are active again and a compaction runs.

Steps 1-4 are bounded by the conversation's own scopes (its branches, its
chat scope, its user's scope) and run in one transaction, so an API answer
can say what was removed (`LineageReport`); the language-model work of step 5
runs in the job. Every change writes versions with the actor who caused it.
"""

