/**
 * LangGraph.js adapters over the memory service, on the same endpoints and
 * wire shapes as the Python adapters (`memory_client.adapters.langgraph_*`):
 *
 * - `MemoryCheckpointSaver`, a `BaseCheckpointSaver`: a thread is a
 *   conversation; checkpoints and pending writes travel as the saver's
 *   serializer wrote them (`serde.dumpsTyped`: a type string and bytes,
 *   base64 on the wire). A thread resumes in the other language when both
 *   sides read what the other wrote: LangGraph.js's `JsonPlusSerializer`
 *   writes and reads `json`; Python's reads `json` and, by default, writes
 *   `msgpack`, so a Python saver shared with Node is made with
 *   `langgraph_checkpointer_for(serde=LangGraphJsonSerializer())`.
 * - `MemoryLangGraphStore`, a `BaseStore`: `(namespace, key)` is the document
 *   at `/<label>/.../<key>` of a memory store, the value its content as JSON;
 *   a whole `batch` is one request; a search `query` ranks by meaning
 *   through the service's recall index.
 */

import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  BaseStore,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type Item,
  type Operation,
  type OperationResults,
  type PendingWrite,
  type SearchItem,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  maxChannelVersion,
  validateNamespace,
} from "@langchain/langgraph-checkpoint";

import type { ClientConfig } from "../client.js";
import { nothing, type Call } from "../transport.js";

export const PAGE_SIZE = 100;

type Json = Record<string, any>;

const b64 = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, "base64"));

function configurableOf(config: RunnableConfig | undefined): Json {
  return (config?.configurable ?? {}) as Json;
}

const threadKey = (threadId: string, ns: string) => `${threadId}\0${ns}`;

export class MemoryCheckpointSaver extends BaseCheckpointSaver<string> {
  readonly #config: ClientConfig;
  // The channel versions whose values this saver has stored or read, per
  // thread and namespace ("channel\0version"). A put stores the values of the
  // channels it was given new versions for and of those already stored at
  // the same version, as LangGraph's savers that keep one blob per channel
  // version do: a value no put ever stored is not made up by a later one.
  readonly #stored = new Map<string, Set<string>>();

  constructor(config: ClientConfig, options: { serde?: SerializerProtocol } = {}) {
    super(options.serde);
    this.#config = config;
  }

  #storedIn(threadId: string, ns: string): Set<string> {
    const key = threadKey(threadId, ns);
    let stored = this.#stored.get(key);
    if (!stored) this.#stored.set(key, (stored = new Set()));
    return stored;
  }

  async #writes(data: Json): Promise<[string, string, unknown][]> {
    return Promise.all(
      (data.pending_writes ?? []).map(async (write: Json) => [
        write.task_id, write.channel, await this.serde.loadsTyped(write.type, unb64(write.value)),
      ] as [string, string, unknown]),
    );
  }

  async #tuple(data: Json): Promise<CheckpointTuple> {
    const { thread_id: threadId, checkpoint_ns: ns, parent_checkpoint_id: parent } = data;
    const checkpoint = (await this.serde.loadsTyped(data.type, unb64(data.checkpoint))) as Checkpoint;
    const pendingWrites = await this.#writes(data);
    if (checkpoint.v < 4 && parent) await this.#migratePendingSends(checkpoint, threadId, ns, parent);
    const stored = this.#storedIn(threadId, ns);
    for (const channel of Object.keys(checkpoint.channel_values ?? {})) {
      stored.add(`${channel}\0${checkpoint.channel_versions?.[channel]}`);
    }
    return {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: data.checkpoint_id } },
      checkpoint,
      metadata: (data.metadata ?? {}) as CheckpointMetadata,
      parentConfig: parent ? { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parent } } : undefined,
      pendingWrites: pendingWrites as CheckpointTuple["pendingWrites"],
    };
  }

  /** Checkpoints before format 4 kept the sends of a step as writes to its
   * parent: they become the `TASKS` channel's value, as LangGraph's savers migrate them. */
  async #migratePendingSends(checkpoint: Checkpoint, threadId: string, ns: string, parent: string): Promise<void> {
    const data = await this.#config.run({
      method: "GET", path: "langgraph_checkpoints/tuple", params: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parent },
    });
    const sends = data ? (await this.#writes(data)).filter(([, channel]) => channel === TASKS).map(([, , value]) => value) : [];
    if (!sends.length) return;
    checkpoint.channel_values = { ...checkpoint.channel_values, [TASKS]: sends };
    const versions = Object.values(checkpoint.channel_versions ?? {});
    checkpoint.channel_versions = {
      ...checkpoint.channel_versions,
      [TASKS]: versions.length ? maxChannelVersion(...versions) : this.getNextVersion(undefined),
    };
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const configurable = configurableOf(config);
    if (configurable.thread_id === undefined) return undefined;
    const data = await this.#config.run({
      method: "GET", path: "langgraph_checkpoints/tuple",
      params: {
        thread_id: configurable.thread_id, checkpoint_ns: configurable.checkpoint_ns ?? "",
        checkpoint_id: configurable.checkpoint_id,
      },
    });
    return data ? this.#tuple(data) : undefined;
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const configurable = configurableOf(config);
    const params: Json = {};
    if (configurable.thread_id !== undefined) params.thread_id = configurable.thread_id;
    if (configurable.checkpoint_ns !== undefined) params.checkpoint_ns = configurable.checkpoint_ns;
    if (configurable.checkpoint_id) params.checkpoint_id = configurable.checkpoint_id;
    const before = configurableOf(options.before).checkpoint_id;
    if (before) params.before = before;
    if (options.filter && Object.keys(options.filter).length) params.filter = JSON.stringify(options.filter);
    let remaining = options.limit;
    while (remaining === undefined || remaining > 0) {
      const size = remaining === undefined ? PAGE_SIZE : Math.min(PAGE_SIZE, remaining);
      const page = await this.#config.run({
        method: "GET", path: "langgraph_checkpoints", params: { ...params, limit: size }, parse: (a) => a.json,
      });
      for (const data of page.data) yield await this.#tuple(data);
      if (remaining !== undefined) remaining -= page.data.length;
      const cursor = page.meta?.next_cursor;
      if (!cursor) return;
      params.cursor = cursor;
    }
  }

  // A put is an upsert by (thread, namespace, id); regular writes are
  // insert-or-ignore and special ones overwrite: every save is safe to retry.

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const configurable = configurableOf(config);
    const threadId = configurable.thread_id;
    if (threadId === undefined) throw new Error('Failed to put checkpoint: the config has no "thread_id" in "configurable".');
    const ns = configurable.checkpoint_ns ?? "";
    const stored = this.#storedIn(threadId, ns);
    for (const [channel, version] of Object.entries(newVersions)) stored.add(`${channel}\0${version}`);
    const values = Object.fromEntries(
      Object.entries(checkpoint.channel_values ?? {}).filter(
        ([channel]) => stored.has(`${channel}\0${checkpoint.channel_versions?.[channel]}`),
      ),
    );
    const [type, data] = await this.serde.dumpsTyped({ ...checkpoint, channel_values: values });
    await this.#config.run({
      method: "POST", path: "langgraph_checkpoints", parse: nothing, retry: true,
      json: {
        thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id,
        parent_checkpoint_id: configurable.checkpoint_id ?? null, type, checkpoint: b64(data), metadata,
      },
    });
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    if (!writes.length) return;
    const configurable = configurableOf(config);
    if (configurable.thread_id === undefined) throw new Error('Failed to put writes: the config has no "thread_id" in "configurable".');
    if (configurable.checkpoint_id === undefined) throw new Error('Failed to put writes: the config has no "checkpoint_id" in "configurable".');
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, data] = await this.serde.dumpsTyped(value);
        return { idx: WRITES_IDX_MAP[channel] ?? idx, channel, type, value: b64(data) };
      }),
    );
    await this.#config.run({
      method: "POST", path: "langgraph_checkpoints/writes", parse: nothing, retry: true,
      json: {
        thread_id: configurable.thread_id, checkpoint_ns: configurable.checkpoint_ns ?? "",
        checkpoint_id: configurable.checkpoint_id, task_id: taskId, task_path: taskPath, writes: rows,
      },
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    for (const key of this.#stored.keys()) if (key.startsWith(`${threadId}\0`)) this.#stored.delete(key);
    await this.#config.run({
      method: "POST", path: "langgraph_checkpoints/delete_thread", json: { thread_id: String(threadId) }, parse: nothing, retry: true,
    });
  }

  async copyThread(sourceThreadId: string, targetThreadId: string): Promise<void> {
    await this.#config.run({
      method: "POST", path: "langgraph_checkpoints/copy_thread", retry: true,
      json: { source_thread_id: String(sourceThreadId), target_thread_id: String(targetThreadId) },
    });
  }

  async deleteForRuns(runIds: string[]): Promise<void> {
    if (!runIds.length) return;
    await this.#config.run({
      method: "POST", path: "langgraph_checkpoints/delete_for_runs", json: { run_ids: runIds.map(String) }, retry: true,
    });
  }

  async prune(threadIds: string[], options: { strategy?: "keep_latest" | "delete" } = {}): Promise<void> {
    if (!threadIds.length) return;
    await this.#config.run({
      method: "POST", path: "langgraph_checkpoints/prune", retry: true,
      json: { thread_ids: threadIds.map(String), strategy: options.strategy ?? "keep_latest" },
    });
  }

  /** Zero-padded, string-comparable versions, as the Python adapter and LangGraph's own savers make,
   * so a thread's versions keep their order whichever language wrote them. */
  override getNextVersion(current: string | number | undefined): string {
    const value = current === undefined ? 0 : typeof current === "number" ? current : Number.parseInt(current.split(".")[0], 10);
    return `${String(value + 1).padStart(32, "0")}.${Math.random().toFixed(16).slice(2).padStart(16, "0")}`;
  }
}

type WireOp = Json;

function opWire(op: Operation): WireOp {
  if ("namespacePrefix" in op) {
    return {
      op: "search", namespace_prefix: [...op.namespacePrefix], filter: op.filter ?? null, limit: op.limit ?? 10,
      offset: op.offset ?? 0, query: op.query ?? null, refresh_ttl: true,
    };
  }
  if ("value" in op) {
    return { op: "put", namespace: [...op.namespace], key: op.key, value: op.value === null ? null : { ...op.value }, ttl: null };
  }
  if ("key" in op) return { op: "get", namespace: [...op.namespace], key: op.key, refresh_ttl: true };
  if ("limit" in op && "offset" in op) {
    return {
      op: "list_namespaces",
      match_conditions: (op.matchConditions ?? []).map((c) => ({ match_type: c.matchType, path: [...c.path] })),
      max_depth: op.maxDepth ?? null, limit: op.limit, offset: op.offset,
    };
  }
  throw new Error(`Unknown operation type: ${JSON.stringify(op)}`);
}

function item(data: Json, search: boolean): Item | SearchItem {
  const base: Item = {
    namespace: [...data.namespace], key: data.key, value: data.value,
    createdAt: new Date(data.created_at), updatedAt: new Date(data.updated_at),
  };
  return search ? { ...base, score: data.score ?? undefined } : base;
}

function result(wire: WireOp, data: any): unknown {
  switch (wire.op) {
    case "get":
      return data ? item(data, false) : null;
    case "search":
      return (data as Json[]).map((found) => item(found, true));
    case "list_namespaces":
      return (data as string[][]).map((namespace) => [...namespace]);
    default:
      return undefined;
  }
}

export class MemoryLangGraphStore extends BaseStore {
  readonly storeId: string | null;
  readonly #config: ClientConfig;

  constructor(config: ClientConfig, options: { storeId?: string | null } = {}) {
    super();
    this.#config = config;
    this.storeId = options.storeId ?? null;
  }

  #call(ops: Operation[]): Call<any[]> {
    const wire = ops.map((op) => {
      if ("namespace" in op) validateNamespace(op.namespace);
      return opWire(op);
    });
    // Puts are upserts by (namespace, key) and deletes of a gone item are
    // no-ops: replaying a batch leaves the same state.
    return { method: "POST", path: "langgraph_store/batch", json: { store_id: this.storeId, ops: wire }, retry: true };
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    if (!operations.length) return [] as OperationResults<Op>;
    const data = await this.#config.run(this.#call(operations));
    const wire = operations.map(opWire);
    return wire.map((op, i) => result(op, data[i])) as OperationResults<Op>;
  }
}
