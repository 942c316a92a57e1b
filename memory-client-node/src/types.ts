/**
 * Typed results of the conversation API: spec 000's shapes with its Node
 * names (camelCase). Times are epoch milliseconds, as the service sends them.
 * Other resources (memory items, stores, versions, jobs ...) come back as
 * plain objects in the service's own wire shapes, as the Python client
 * returns them.
 */

export type Role = "user" | "assistant" | "system" | "tool";

export interface Message {
  messageId: string;
  role: Role | string;
  content: any;
  createdAt?: number | null;
  metadata: Record<string, any>;
  updatedAt?: number | null;
  conversationId?: string | null;
  branch?: string | null;
  floorNo?: number | null;
}

export interface ConversationMeta {
  conversationId: string;
  createdAt?: number | null;
  lastMessageAt?: number | null;
  messageCount: number;
  metadata: Record<string, any>;
  userId?: string | null;
  source?: string | null;
}

export interface ListConversationsResult {
  items: ConversationMeta[];
  nextCursor?: string | null;
  previousCursor?: string | null;
}

export function messageFromWire(data: Record<string, any>): Message {
  return {
    messageId: data.message_id ?? data.id,
    role: data.role,
    content: data.content,
    createdAt: data.created_at ?? null,
    metadata: data.metadata ?? {},
    updatedAt: data.updated_at ?? null,
    conversationId: data.conversation_id ?? null,
    branch: data.branch ?? null,
    floorNo: data.floor_no ?? null,
  };
}

export function conversationFromWire(data: Record<string, any>): ConversationMeta {
  return {
    conversationId: data.conversation_id,
    createdAt: data.created_at ?? null,
    lastMessageAt: data.last_message_at ?? null,
    messageCount: data.message_count ?? 0,
    metadata: data.metadata ?? {},
    userId: data.user_id ?? null,
    source: data.source ?? null,
  };
}

/** One page of a list endpoint: the items and how to get the next page. */
export class Page<T = any> {
  constructor(
    public data: T[],
    public nextCursor: string | null = null,
    public meta: Record<string, any> = {},
  ) {}

  /** Offset pages (`meta.total/limit/offset`): how many match in all (a
   * lower bound when `meta.total_exact` is false). */
  get total(): number | null {
    return this.meta.total ?? null;
  }

  /** The `offset` of the next offset page, or null after the last one. */
  get nextOffset(): number | null {
    if (!("total" in this.meta) || this.data.length === 0) return null;
    const following = Number(this.meta.offset ?? 0) + this.data.length;
    // exact even where `total` is a bound (lists filtered by `q`)
    if ("has_more" in this.meta) return this.meta.has_more ? following : null;
    return following < Number(this.meta.total) ? following : null;
  }
}
