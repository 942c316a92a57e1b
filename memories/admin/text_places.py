"""Where a text is, in the words an operator reads: the user-text registry's
columns (`memory_project.user_text`) as "1 message, 2 memories, 1 rolling
summary". The redact-everywhere preview and its result both count with
`text_sweep_count` and both speak through here, so they say the same thing
in the same terms."""

from __future__ import annotations

from dataclasses import dataclass

from memory_project.user_text import Erase, TextColumn, text_columns

# The columns operators know by another name than their model's.
NAMES: dict[str, tuple[str, str]] = {
    "conversations.Message.content": ("message", "messages"),
    "memories.MemoryItem.content": ("memory", "memories"),
    "memories.MemoryVersion.content": ("memory version", "memory versions"),
    "memories.ScopeState.rolling_summary": ("rolling summary", "rolling summaries"),
    "conversations.Conversation.metadata": ("conversation's metadata", "conversations' metadata"),
}
HAPPENS_TO: dict[str, str] = {
    "conversations.Message.content": "the text is replaced by “[redacted]”; what was derived from the message is "
                                     "erased and derived again",
    "memories.MemoryItem.content": "the text is replaced by “[redacted]” as a new version; every earlier version "
                                   "is cleared",
    "memories.MemoryVersion.content": "cleared for good (who wrote it and when stay)",
}
WHAT_HAPPENS = {
    Erase.LINEAGE: "erased with what was derived from it",
    Erase.SCRUB: "the text is replaced by “[redacted]”",
    Erase.DELETE_ROW: "the row holding it is deleted",
    Erase.REBUILD: "rebuilt from what remains",
    Erase.CLEAR: "cleared, then derived again from what remains",
}


@dataclass(frozen=True)
class TextPlace:
    one: str
    many: str
    count: int
    happens: str

    @property
    def label(self) -> str:
        return f"{self.count} {self.one if self.count == 1 else self.many}"


def _names(column: TextColumn) -> tuple[str, str]:
    key = f"{column.model}.{column.field}"
    if key in NAMES:
        return NAMES[key]
    meta = column.model_class._meta
    field = meta.get_field(column.field).verbose_name
    return f"{meta.verbose_name} ({field})", f"{meta.verbose_name_plural} ({field})"


def text_places(counts: dict[str, int]) -> list[TextPlace]:
    """`text_sweep_count`'s `table.column -> rows`, in the registry's order."""
    places = []
    for column in text_columns():
        count = counts.get(f"{column.table}.{column.field}", 0)
        if count:
            one, many = _names(column)
            happens = HAPPENS_TO.get(f"{column.model}.{column.field}", WHAT_HAPPENS[column.erase])
            places.append(TextPlace(one, many, count, happens))
    return places


def places_sentence(counts: dict[str, int]) -> str:
    """"1 message, 2 memories and 1 rolling summary" (or "nowhere")."""
    labels = [place.label for place in text_places(counts)]
    if not labels:
        return "nowhere"
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"
