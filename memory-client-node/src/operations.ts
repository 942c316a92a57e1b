/**
 * Every REST operation of the service, described once as a `Call`, with the
 * Python client's operations' names in camelCase and their keyword arguments
 * as one object (camelCase keys; filters and free-form bodies are sent with
 * their keys in the service's snake_case).
 */

import { isRecord } from "./errors.js";
import { snakeKeys } from "./names.js";
import { type Answer, type Call, bodyOf, dataOf, nothing, seg, withIdempotencyKey } from "./transport.js";
import {
  type ConversationMeta,
  type ListConversationsResult,
  type Message,
  Page,
  conversationFromWire,
  messageFromWire,
} from "./types.js";

type Json = Record<string, any>;

function page(answer: Answer): Page {
  // `{"data": [...], "meta": {...}}` (conversations, items) or `{"data", "next_page"}` (stores).
  const body = isRecord(answer.json) ? answer.json : {};
  const meta = isRecord(body.meta) ? body.meta : {};
  const cursor = "next_page" in body ? body.next_page : meta.next_cursor;
  return new Page(Array.isArray(body.data) ? body.data : [], cursor ?? null, meta);
}

function messagesPage(answer: Answer): Page<Message> {
  if (answer.status === 404) return new Page<Message>([]); // spec 000: an unknown conversation has no messages
  const result = page(answer);
  return new Page(result.data.map(messageFromWire), result.nextCursor, result.meta);
}

const conversation = (answer: Answer): ConversationMeta => conversationFromWire(dataOf(answer));
const message = (answer: Answer): Message => messageFromWire(dataOf(answer));

// --- Conversations and messages (spec 000) ----------------------------------

export interface AppendMessageArgs {
  conversationId: string;
  role: string;
  content: unknown;
  metadata?: Json | null;
  userId?: string | null;
  branch?: string | null;
  idempotencyKey?: string | null;
}

/** Resolves to the new message id. An `Idempotency-Key` is sent (generated
 * when not given), so a retried append never writes the message twice. */
export function appendMessage(args: AppendMessageArgs): Call<string> {
  const body: Json = { role: args.role, content: args.content };
  if (args.metadata != null) body.metadata = args.metadata;
  if (args.userId != null) body.user_id = args.userId;
  if (args.branch != null) body.branch = args.branch;
  const call: Call<string> = {
    method: "POST", path: `conversations/${seg(args.conversationId)}/messages`, json: body,
    parse: (a) => dataOf(a).message_id,
  };
  return withIdempotencyKey(call, args.idempotencyKey);
}

export interface AppendMessagesArgs {
  conversationId: string;
  messages: Json[];
  userId?: string | null;
  branch?: string | null;
  idempotencyKey?: string | null;
}

/** Appends up to 100 messages (`{role, content, metadata?, idempotency_key?}`) in
 * order, all or none, in one request; resolves to their ids. Each message
 * without its own key is replayed under `<key>:<index>` when retried. */
export function appendMessages(args: AppendMessagesArgs): Call<string[]> {
  const body: Json = { messages: [...args.messages] };
  if (args.userId != null) body.user_id = args.userId;
  if (args.branch != null) body.branch = args.branch;
  const call: Call<string[]> = {
    method: "POST", path: `conversations/${seg(args.conversationId)}/messages`, json: body,
    parse: (a) => dataOf(a).map((item: Json) => item.message_id),
  };
  return withIdempotencyKey(call, args.idempotencyKey);
}

export interface GetMessagesArgs {
  conversationId: string;
  limit?: number | null;
  order?: "asc" | "desc" | null;
  after?: string | null;
  before?: string | null;
  branch?: string | null;
}

export function getMessagesPage(args: GetMessagesArgs): Call<Page<Message>> {
  const { conversationId, limit, order, after, before, branch } = args;
  return {
    method: "GET", path: `conversations/${seg(conversationId)}/messages`,
    params: { limit, order, after, before, branch }, parse: messagesPage, accept: [404],
  };
}

/** `Message[]` (oldest first by default); `[]` for an unknown conversation. */
export function getMessages(args: GetMessagesArgs): Call<Message[]> {
  return { ...getMessagesPage(args), parse: (a) => messagesPage(a).data };
}

/** The service-side conversion (`format: "anthropic" | "openai"`) of a page of messages. */
export function getFormattedMessages(args: { conversationId: string; format: string } & Omit<GetMessagesArgs, "conversationId">): Call {
  const { conversationId, format, ...params } = args;
  return { method: "GET", path: `conversations/${seg(conversationId)}/messages`, params: { format, ...snakeKeys(params) } };
}

export function updateMessage(args: { conversationId: string; messageId: string; content?: unknown; metadata?: Json | null }): Call<Message> {
  const body: Json = {};
  if (args.content !== undefined) body.content = args.content;
  if (args.metadata !== undefined) body.metadata = args.metadata;
  return {
    method: "PATCH", path: `conversations/${seg(args.conversationId)}/messages/${seg(args.messageId)}`, json: body,
    parse: message, retry: true,
  };
}

export function deleteMessage(args: { conversationId: string; messageId: string }): Call<null> {
  return { method: "DELETE", path: `conversations/${seg(args.conversationId)}/messages/${seg(args.messageId)}`, parse: nothing };
}

export function clearMessages(args: { conversationId: string }): Call<null> {
  return { method: "DELETE", path: `conversations/${seg(args.conversationId)}/messages`, parse: nothing };
}

export function createConversation(args: { conversationId: string; userId?: string | null; metadata?: Json | null }): Call<ConversationMeta> {
  const body: Json = { conversation_id: args.conversationId };
  if (args.userId) body.user_id = args.userId;
  if (args.metadata != null) body.metadata = args.metadata;
  return { method: "POST", path: "conversations", json: body, parse: conversation };
}

export function getConversation(args: { conversationId: string }): Call<ConversationMeta> {
  return { method: "GET", path: `conversations/${seg(args.conversationId)}`, parse: conversation };
}

export interface ListConversationsArgs {
  limit?: number | null;
  order?: "asc" | "desc" | null;
  after?: string | null;
  before?: string | null;
  userId?: string | null;
  source?: string | null;
}

export function listConversations(args: ListConversationsArgs = {}): Call<ListConversationsResult> {
  const { limit, order, after, before, userId, source } = args;
  return {
    method: "GET", path: "conversations", params: { limit, order, after, before, user_id: userId, source },
    parse: (a) => {
      const body = bodyOf(a) ?? {};
      const meta = body.meta ?? {};
      return {
        items: (body.data ?? []).map(conversationFromWire),
        nextCursor: meta.next_cursor ?? null,
        previousCursor: meta.previous_cursor ?? null,
      };
    },
  };
}

/** Shallow-merges `metadata` (a `null` value deletes its key). */
export function updateConversation(args: { conversationId: string; metadata?: Json | null; userId?: string | null }): Call<ConversationMeta> {
  const body: Json = {};
  if (args.metadata !== undefined) body.metadata = args.metadata;
  if (args.userId !== undefined) body.user_id = args.userId;
  return { method: "PATCH", path: `conversations/${seg(args.conversationId)}`, json: body, parse: conversation, retry: true };
}

export function deleteConversation(args: { conversationId: string }): Call<null> {
  return { method: "DELETE", path: `conversations/${seg(args.conversationId)}`, parse: nothing };
}

export function createBranch(args: { conversationId: string; name: string; fromMessageId: string }): Call {
  return {
    method: "POST", path: `conversations/${seg(args.conversationId)}/branches`,
    json: { name: args.name, from_message_id: args.fromMessageId },
  };
}

export function listBranches(args: { conversationId: string }): Call {
  return { method: "GET", path: `conversations/${seg(args.conversationId)}/branches` };
}

/** Context assembly (`POST .../context`): history plus memories chosen under a
 * token budget. Only reads, so a retry is safe. */
export function getContext(args: { conversationId: string; [field: string]: unknown }): Call {
  const { conversationId, ...body } = args;
  return { method: "POST", path: `conversations/${seg(conversationId)}/context`, json: snakeKeys(body), retry: true };
}

/** `{conversation_id, resources: [...]}`: the memory stores attached to it. */
export function getResources(args: { conversationId: string }): Call {
  return { method: "GET", path: `conversations/${seg(args.conversationId)}/resources` };
}

/** Replaces the attached stores: full `resources` entries, or the shorthand
 * `memoryStoreIds` (each attached read-write). A replacement, so a retry is safe. */
export function setResources(args: { conversationId: string; resources?: Json[] | null; memoryStoreIds?: string[] | null }): Call {
  const body = args.memoryStoreIds != null ? { memory_store_ids: args.memoryStoreIds } : { resources: args.resources ?? [] };
  return { method: "PUT", path: `conversations/${seg(args.conversationId)}/resources`, json: body };
}

// --- Memory items, edges, jobs, scopes (spec 003) ----------------------------
// Lists are offset pages (`meta.total/limit/offset`); see `Page.nextOffset`.
// PATCH bodies set absolute values (a repeat changes nothing more), so they are
// retried; POSTs that add a version or queue work again are not.

type Filters = Record<string, any>;

/** Filters: userId (with includeConversations), conversationId, scope, scopeId, type, status, lifecycleStatus,
 * factKey, metadata (an object: each key with that value), q, importanceMin ..., sortBy, sortOrder, limit, offset. */
export function listMemories(args: Filters = {}): Call<Page> {
  return { method: "GET", path: "memories", params: snakeKeys(args), parse: page };
}

/** A `Page` of the memories most relevant to `query` (by meaning and words, as
 * the recall index ranks them), best first, each with its `score`; in a user's
 * scope (`userId`), a conversation's (`conversationId`) or `scope` + `scopeId`.
 * Other list filters apply. */
export function searchMemories(args: { query: string; userId?: string | null; conversationId?: string | null; [filter: string]: unknown }): Call<Page> {
  return { method: "GET", path: "memories", params: snakeKeys(args), parse: page };
}

/** Deletes every memory of a user, following lineage: `{user_id, deleted, ids}`.
 * Deleting twice deletes nothing more, so it is retried. */
export function deleteUserMemories(args: { userId: string; includeConversations?: boolean }): Call {
  return {
    method: "DELETE", path: "memories",
    params: { user_id: args.userId, include_conversations: args.includeConversations ?? false }, retry: true,
  };
}

export function createMemory(args: { scope: string; type: string; content: unknown; [field: string]: unknown }): Call {
  return { method: "POST", path: "memories", json: snakeKeys(args) };
}

export function getMemory(args: { memoryId: string }): Call {
  return { method: "GET", path: `memories/${seg(args.memoryId)}` };
}

/** Changes plus optional `expectedVersion` / `expectedContentSha256` (409 `memory_precondition_failed` when stale). */
export function updateMemory(args: { memoryId: string; [field: string]: unknown }): Call {
  const { memoryId, ...changes } = args;
  return { method: "PATCH", path: `memories/${seg(memoryId)}`, json: snakeKeys(changes), retry: true };
}

/** `{id, deleted: true}`. */
export function deleteMemory(args: { memoryId: string }): Call {
  return { method: "DELETE", path: `memories/${seg(args.memoryId)}` };
}

/** Totals over the same filters as `listMemories`. */
export function memoryStats(args: Filters = {}): Call {
  return { method: "GET", path: "memories/stats", params: snakeKeys(args) };
}

/** `{results: [{id, result, changed?}], meta: {counts}}`. */
export function batchUpdateMemoryStatus(args: { ids: string[]; status: string }): Call {
  return { method: "PATCH", path: "memories/batch/status", json: { ids: args.ids, status: args.status }, retry: true };
}

/** `{results: [{id, result}], meta: {counts}}`; a repeat reports the ids `not_found`, so it is retried. */
export function batchDeleteMemories(args: { ids: string[] }): Call {
  return { method: "POST", path: "memories/batch/delete", json: { ids: args.ids }, retry: true };
}

export function listMemoryVersions(args: { memoryId: string; [field: string]: unknown }): Call<Page> {
  const { memoryId, ...params } = args;
  return { method: "GET", path: `memories/${seg(memoryId)}/versions`, params: snakeKeys(params), parse: page };
}

export function getMemoryVersion(args: { memoryId: string; versionId: string }): Call {
  return { method: "GET", path: `memories/${seg(args.memoryId)}/versions/${seg(args.versionId)}` };
}

/** Erases the version's content (idempotent: a redacted version stays redacted). */
export function redactMemoryVersion(args: { memoryId: string; versionId: string }): Call {
  return { method: "POST", path: `memories/${seg(args.memoryId)}/versions/${seg(args.versionId)}/redact`, retry: true };
}

/** Writes the version's content back as a new version: not retried, since a repeat would add another. */
export function restoreMemory(args: { memoryId: string; versionId: string }): Call {
  return { method: "POST", path: `memories/${seg(args.memoryId)}/restore`, json: { version_id: args.versionId }, retry: false };
}

/** Filters: fromId, toId, relation, sortOrder, limit, offset. */
export function listEdges(args: Filters = {}): Call<Page> {
  return { method: "GET", path: "memory_edges", params: snakeKeys(args), parse: page };
}

export function createEdge(args: { fromId: string; toId: string; relation: string }): Call {
  return { method: "POST", path: "memory_edges", json: { from_id: args.fromId, to_id: args.toId, relation: args.relation } };
}

export function getEdge(args: { edgeId: string }): Call {
  return { method: "GET", path: `memory_edges/${seg(args.edgeId)}` };
}

export function updateEdge(args: { edgeId: string; relation: string }): Call {
  return { method: "PATCH", path: `memory_edges/${seg(args.edgeId)}`, json: { relation: args.relation }, retry: true };
}

/** `{id, deleted: true}`. */
export function deleteEdge(args: { edgeId: string }): Call {
  return { method: "DELETE", path: `memory_edges/${seg(args.edgeId)}` };
}

/** Filters: scope, scopeId, status, kind, limit, offset (newest first). */
export function listJobs(args: Filters = {}): Call<Page> {
  return { method: "GET", path: "memory_jobs", params: snakeKeys(args), parse: page };
}

export function getJob(args: { jobId: string }): Call {
  return { method: "GET", path: `memory_jobs/${seg(args.jobId)}` };
}

/** A failed or cancelled job goes back to pending. Not retried: a repeat could run the job twice. */
export function retryJob(args: { jobId: string }): Call {
  return { method: "POST", path: `memory_jobs/${seg(args.jobId)}/retry`, retry: false };
}

/** Cancels a pending job, or asks a running one to stop; retried (it may answer 409 once cancelled). */
export function cancelJob(args: { jobId: string }): Call {
  return { method: "POST", path: `memory_jobs/${seg(args.jobId)}/cancel`, retry: true };
}

/** Scope states; filters: scope, scopeId, dirty, limit, offset. */
export function listScopes(args: Filters = {}): Call<Page> {
  return { method: "GET", path: "memory_scopes", params: snakeKeys(args), parse: page };
}

/** Queues a rebuild of a branch scope; resolves to the (pending) job. */
export function rebuildScope(args: { scope: string; scopeId: string }): Call {
  return { method: "POST", path: "memory_scopes/rebuild", json: { scope: args.scope, scope_id: args.scopeId }, retry: false };
}

/** Queues a compaction of the scope's micro summaries; resolves to the job. */
export function compactScope(args: { scope: string; scopeId?: string }): Call {
  return { method: "POST", path: "memory_scopes/compact", json: { scope: args.scope, scope_id: args.scopeId ?? "" }, retry: false };
}

// --- Memory stores, memories, versions, tools (specs 001 / 004) ---------------

export function createStore(args: { name: string; description?: string | null; metadata?: Record<string, string> | null }): Call {
  const body: Json = { name: args.name };
  if (args.description != null) body.description = args.description;
  if (args.metadata != null) body.metadata = args.metadata;
  return { method: "POST", path: "memory_stores", json: body, parse: bodyOf };
}

export function getStore(args: { storeId: string }): Call {
  return { method: "GET", path: `memory_stores/${seg(args.storeId)}`, parse: bodyOf };
}

export function updateStore(args: { storeId: string; [field: string]: unknown }): Call {
  const { storeId, ...body } = args;
  return { method: "POST", path: `memory_stores/${seg(storeId)}`, json: snakeKeys(body), parse: bodyOf, retry: true };
}

export function listStores(args: { limit?: number | null; page?: string | null; includeArchived?: boolean | null } = {}): Call<Page> {
  return {
    method: "GET", path: "memory_stores",
    params: { limit: args.limit, page: args.page, include_archived: args.includeArchived }, parse: page,
  };
}

export function archiveStore(args: { storeId: string }): Call {
  return { method: "POST", path: `memory_stores/${seg(args.storeId)}/archive`, parse: bodyOf, retry: true };
}

export function deleteStore(args: { storeId: string }): Call {
  return { method: "DELETE", path: `memory_stores/${seg(args.storeId)}`, parse: bodyOf };
}

export interface ListStoreMemoriesArgs {
  storeId: string;
  pathPrefix?: string | null;
  depth?: number | null;
  limit?: number | null;
  view?: "basic" | "full" | null;
  page?: string | null;
}

export function listStoreMemories(args: ListStoreMemoriesArgs): Call<Page> {
  const { storeId, pathPrefix, depth, limit, view, page: pageToken } = args;
  return {
    method: "GET", path: `memory_stores/${seg(storeId)}/memories`,
    params: { path_prefix: pathPrefix, depth, limit, view, page: pageToken }, parse: page,
  };
}

/** Upsert by path (`precondition: {type: "not_exists"}` makes it create-only).
 * Safe to retry: writing the same content twice changes nothing. */
export function writeStoreMemory(args: { storeId: string; path: string; content: string; precondition?: Json | null; view?: string | null }): Call {
  const body: Json = { path: args.path, content: args.content };
  if (args.precondition) body.precondition = args.precondition;
  return {
    method: "POST", path: `memory_stores/${seg(args.storeId)}/memories`, params: { view: args.view }, json: body,
    parse: bodyOf, retry: true,
  };
}

export function getStoreMemory(args: { storeId: string; memoryId: string; view?: string | null }): Call {
  return {
    method: "GET", path: `memory_stores/${seg(args.storeId)}/memories/${seg(args.memoryId)}`,
    params: { view: args.view }, parse: bodyOf,
  };
}

export function updateStoreMemory(args: {
  storeId: string; memoryId: string; content?: string | null; path?: string | null; precondition?: Json | null; view?: string | null;
}): Call {
  const body: Json = {};
  if (args.content != null) body.content = args.content;
  if (args.path != null) body.path = args.path;
  if (args.precondition != null) body.precondition = args.precondition;
  return {
    method: "POST", path: `memory_stores/${seg(args.storeId)}/memories/${seg(args.memoryId)}`, params: { view: args.view },
    json: body, parse: bodyOf, retry: args.precondition != null,
  };
}

export function putStoreMemory(args: { storeId: string; memoryId: string; content: string; version: number }): Call {
  return {
    method: "PUT", path: `memory_stores/${seg(args.storeId)}/memories/${seg(args.memoryId)}`,
    json: { content: args.content, version: args.version }, parse: bodyOf,
  };
}

export function deleteStoreMemory(args: { storeId: string; memoryId: string; expectedContentSha256?: string | null }): Call {
  return {
    method: "DELETE", path: `memory_stores/${seg(args.storeId)}/memories/${seg(args.memoryId)}`,
    params: { expected_content_sha256: args.expectedContentSha256 }, parse: bodyOf,
  };
}

export function listStoreMemoryVersions(args: { storeId: string; [field: string]: unknown }): Call<Page> {
  const { storeId, ...params } = args;
  return { method: "GET", path: `memory_stores/${seg(storeId)}/memory_versions`, params: snakeKeys(params), parse: page };
}

export function getStoreMemoryVersion(args: { storeId: string; versionId: string; view?: string | null }): Call {
  return {
    method: "GET", path: `memory_stores/${seg(args.storeId)}/memory_versions/${seg(args.versionId)}`,
    params: { view: args.view }, parse: bodyOf,
  };
}

export function redactStoreMemoryVersion(args: { storeId: string; versionId: string }): Call {
  return {
    method: "POST", path: `memory_stores/${seg(args.storeId)}/memory_versions/${seg(args.versionId)}/redact`,
    parse: bodyOf, retry: true,
  };
}

/** `{format, memory_store_id, data: [tool definitions]}`; `format` is `anthropic`
 * (default), `openai` or `openai_responses`. */
export function listStoreTools(args: { storeId: string; format?: string | null; conversationId?: string | null }): Call {
  return {
    method: "GET", path: `memory_stores/${seg(args.storeId)}/tools`,
    params: { format: args.format, conversation_id: args.conversationId }, parse: bodyOf,
  };
}

/** Runs one memory tool: `{type: "tool_result", tool_name, is_error, content, output, error?}`.
 * Not retried: write tools are not idempotent. */
export function callStoreTool(args: { storeId: string; name: string; input?: Json | null; conversationId?: string | null }): Call {
  const body: Json = { input: args.input ?? {} };
  if (args.conversationId != null) body.conversation_id = args.conversationId;
  return { method: "POST", path: `memory_stores/${seg(args.storeId)}/tools/${seg(args.name)}`, json: body, parse: bodyOf };
}

/** `{data: [{name, title, description, input_schema, read_only, destructive}]}`: the MCP server's tools. */
export function listAgentTools(_args: Record<string, never> = {}): Call {
  return { method: "GET", path: "agent_tools", parse: bodyOf };
}

/** Runs one of the MCP server's tools; `clientName` is recorded with the key as the actor. Not retried. */
export function callAgentTool(args: { name: string; input?: Json | null; clientName?: string | null }): Call {
  const body: Json = { input: args.input ?? {} };
  if (args.clientName != null) body.client_name = args.clientName;
  return { method: "POST", path: `agent_tools/${seg(args.name)}`, json: body, parse: bodyOf };
}
