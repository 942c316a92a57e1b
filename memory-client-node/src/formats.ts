/**
 * Stored messages -> the message formats of the Anthropic and OpenAI APIs,
 * the same conversion as `memory_client.formats` and the service's
 * `GET .../messages?format=anthropic|openai`:
 *
 * - `system` messages are lifted out of the Anthropic list (`toAnthropic`
 *   returns them as `system`); same-role turns are merged, empty contents dropped;
 * - a `tool` message answers the call named by `metadata.tool_use_id` (or
 *   `tool_call_id`): a `tool_result` block for Anthropic, `tool_call_id` for OpenAI;
 * - an assistant's `metadata.tool_calls` (OpenAI's shape) become `tool_use`
 *   blocks for Anthropic and stay `tool_calls` for OpenAI;
 * - content already in one API's block / part shapes is translated or passed through.
 *
 * Pure functions over `Message` objects or plain `{role, content, metadata}` objects.
 */

import { isRecord } from "./errors.js";

type Json = Record<string, any>;

const ANTHROPIC_BLOCKS = new Set([
  "text", "image", "document", "search_result", "tool_use", "tool_result", "thinking",
  "redacted_thinking", "server_tool_use", "web_search_tool_result", "container_upload",
]);
const OPENAI_ROLES = new Set(["user", "assistant", "system", "tool"]);

export interface MessageLike {
  role: string;
  content?: any;
  metadata?: Record<string, any> | null;
  tool_call_id?: string;
}

/** JSON text as Python's `json.dumps(value, ensure_ascii=False)` writes it (", " and ": "). */
function pyJson(value: any): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : JSON.stringify(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`).join(", ")}}`;
}

function text(value: any): string {
  return typeof value === "string" ? value : pyJson(value);
}

function meta(message: MessageLike): Json {
  return isRecord(message.metadata) ? message.metadata : {};
}

function callId(message: MessageLike): string | null {
  const m = meta(message);
  const found = m.tool_use_id || m.tool_call_id || message.tool_call_id;
  return typeof found === "string" && found ? found : null;
}

function textBlock(value: any): Json | null {
  return typeof value === "string" && value.trim() ? { type: "text", text: value } : null;
}

function block(part: any): Json | null {
  if (typeof part === "string") return textBlock(part);
  if (isRecord(part)) {
    const kind = part.type;
    if (kind === "text") return typeof part.text === "string" && part.text.trim() ? { ...part } : null;
    if (ANTHROPIC_BLOCKS.has(kind)) return { ...part };
    if (kind === "input_text" || kind === "output_text") return textBlock(part.text);
    if (kind === "image_url") {
      const image = part.image_url;
      const url = isRecord(image) ? image.url : image;
      if (typeof url !== "string" || !url) return null;
      if (url.startsWith("data:") && url.includes(";base64,")) {
        const at = url.indexOf(";base64,");
        return { type: "image", source: { type: "base64", media_type: url.slice(5, at), data: url.slice(at + 8) } };
      }
      return { type: "image", source: { type: "url", url } };
    }
  }
  return textBlock(text(part));
}

function blocks(content: any): Json[] {
  const parts = Array.isArray(content) ? content : [content];
  return parts.map(block).filter((b): b is Json => b !== null);
}

function toolUses(m: Json): Json[] {
  const out: Json[] = [];
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  for (const call of calls) {
    if (!isRecord(call) || typeof call.id !== "string") continue;
    const fn = isRecord(call.function) ? call.function : call;
    let args: any = "arguments" in fn ? fn.arguments : "input" in fn ? fn.input : {};
    if (typeof args === "string") {
      try {
        args = args.trim() ? JSON.parse(args) : {};
      } catch {
        args = { arguments: args };
      }
    }
    if (!isRecord(args)) args = { value: args };
    out.push({ type: "tool_use", id: call.id, name: String(fn.name ?? ""), input: args });
  }
  return out;
}

function resultContent(content: any): any {
  if (typeof content === "string") return content;
  if (isRecord(content) && !(ANTHROPIC_BLOCKS.has(content.type) || content.type === "image_url")) return text(content);
  const out = blocks(content);
  if (out.length && out.every((b) => ["text", "image", "document", "search_result"].includes(b.type))) return out;
  return text(content);
}

function deepEqual(a: any, b: any): boolean {
  return pyJson(a) === pyJson(b);
}

/** `{system, messages}` for `anthropic.messages.create`. */
export function toAnthropic(messages: Iterable<MessageLike>): { system: string | null; messages: Json[] } {
  const system: string[] = [];
  const turns: { role: string; blocks: Json[]; raw: any }[] = [];
  for (const message of messages) {
    let role = message.role;
    const content = message.content;
    const m = meta(message);
    let out: Json[];
    if (role === "system") {
      const value = typeof content === "string"
        ? content
        : blocks(content).map((b) => (b.type === "text" ? b.text : text(b))).join("\n");
      if (value.trim()) system.push(value);
      continue;
    }
    if (role === "tool") {
      const id = callId(message);
      if (id) {
        const result: Json = { type: "tool_result", tool_use_id: id, content: resultContent(content) };
        if (m.is_error === true) result.is_error = true;
        out = [result];
      } else {
        out = blocks(content);
      }
      role = "user";
    } else if (role === "assistant") {
      out = [...blocks(content), ...toolUses(m)];
    } else {
      role = "user";
      out = blocks(content);
    }
    if (!out.length) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.blocks.push(...out);
    else turns.push({ role, blocks: out, raw: content });
  }
  const result = turns.map((turn) => {
    // A stable sort: tool results first, as the API requires them.
    const sorted = [...turn.blocks].sort((a, b) => (a.type === "tool_result" ? 0 : 1) - (b.type === "tool_result" ? 0 : 1));
    if (sorted.length === 1 && deepEqual(sorted[0], { type: "text", text: turn.raw })) {
      return { role: turn.role, content: turn.raw };
    }
    return { role: turn.role, content: sorted };
  });
  return { system: system.join("\n\n") || null, messages: result };
}

/** The `messages` list of `toAnthropic` (system text dropped). */
export function toAnthropicMessages(messages: Iterable<MessageLike>): Json[] {
  return toAnthropic(messages).messages;
}

function openaiContent(content: any): any {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => {
      if (typeof part === "string") return { type: "text", text: part };
      if (isRecord(part) && typeof part.type === "string") return { ...part };
      return { type: "text", text: text(part) };
    });
  }
  if (isRecord(content) && ["text", "image_url", "input_audio", "file"].includes(content.type)) return [{ ...content }];
  return text(content);
}

/** Chat Completions `messages`: roles user|assistant|system|tool, content passed through. */
export function toOpenAIInput(messages: Iterable<MessageLike>): Json[] {
  const out: Json[] = [];
  for (const message of messages) {
    const role = message.role;
    if (!OPENAI_ROLES.has(role)) continue;
    const m = meta(message);
    const item: Json = { role, content: openaiContent(message.content) };
    if (role === "tool") {
      const id = callId(message);
      if (id) item.tool_call_id = id;
      if (Array.isArray(item.content)) {
        const texts = item.content.filter((part: Json) => part.type === "text");
        item.content = texts.length ? texts : "";
      }
    }
    if (role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length) item.tool_calls = m.tool_calls;
    if (typeof m.name === "string" && ["user", "assistant", "system"].includes(role)) item.name = m.name;
    out.push(item);
  }
  return out;
}
