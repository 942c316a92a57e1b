"""Reads of conversations, branches and messages, always scoped to a workspace.

The memory pipeline and context assembly read through these functions, by
entity in `conversations`, `branches` and `messages`:

- `conversation_get(workspace=, external_id=)` / `conversation_get_or_404(...)`
- `branch_get(conversation=, name=)` / `branch_get_or_404(...)`
- `conversation_branch_get_or_404(workspace=, external_id=, name=)`: both in one query
- `branch_messages(branch=, after_floor_no=, until_floor_no=, ...)`: the messages
  a branch shows, inherited parent segments included, in floor order
  (`branch_message_rows(...)`: the same as `MessageRow`s).
- `conversation_list(workspace=, filters=, order=, limit=, after=, before=)`
- `branch_pending_annotations(prefix)`, `branch_last_floor_no(branch_id=)`,
  `branches_idle_with_pending(idle_before=, limit=)`: the pipeline's pending
  work, derived from the branch counters the appends move.
"""

