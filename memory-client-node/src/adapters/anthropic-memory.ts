/**
 * The `memory_20250818` tool of `@anthropic-ai/sdk` backed by a memory store,
 * as the Python adapter (`memory_client.adapters.anthropic_memory`) runs it:
 * `/memories/<p>` is the store document `/<p>`; directories are the path
 * prefixes of documents. Results and error messages are the reference
 * implementation's, so a model sees the same tool whichever backend runs it.
 *
 *     import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory";
 *     const tool = betaMemoryTool(memory.anthropicMemoryTool(storeId).handlers);
 */

import path from "node:path/posix";

import { MemoryConflictError, MemoryNotFoundError } from "../errors.js";
import * as ops from "../operations.js";
import type { Call } from "../transport.js";
import type { Page } from "../types.js";

const ROOT = "/memories";
const LINE_NUMBER_WIDTH = 6;
const DIRECTORY_SIZE = 4096;
const LIST_PAGE = 100;

type Json = Record<string, any>;

/** A mistake the model can fix: the SDK's tool runner sends its `content` back with `is_error: true`. */
export class MemoryToolError extends Error {
  readonly content: string;

  constructor(content: string) {
    super(content);
    this.name = "ToolError";
    this.content = content;
  }
}

function formatSize(size: number): string {
  if (size === 0) return "0B";
  const units = ["B", "K", "M", "G"];
  const index = Math.min(Math.floor(Math.log2(size) / 10), units.length - 1);
  const value = size / 1024 ** index;
  return Number.isInteger(value) ? `${value}${units[index]}` : `${value.toFixed(1)}${units[index]}`;
}

/** The store path for a tool path ('' for /memories itself); `..` that climbs out is refused, never clamped. */
function storePath(toolPath: string): string {
  if (typeof toolPath !== "string" || !toolPath.startsWith(ROOT)) {
    throw new MemoryToolError(`Path must start with /memories, got: ${toolPath}`);
  }
  const rest = toolPath.slice(ROOT.length);
  if (rest && !rest.startsWith("/")) throw new MemoryToolError(`Path must start with /memories, got: ${toolPath}`);
  let resolved = path.normalize(`${ROOT}/${rest.replace(/^\/+/, "")}`);
  if (resolved.length > 1 && resolved.endsWith("/")) resolved = resolved.slice(0, -1);
  if (resolved !== ROOT && !resolved.startsWith(`${ROOT}/`)) {
    throw new MemoryToolError(`Path ${toolPath} would escape /memories directory`);
  }
  return resolved.slice(ROOT.length);
}

function numbered(lines: string[], start: number): string {
  return lines.map((line, i) => `${String(start + i).padStart(LINE_NUMBER_WIDTH)}\t${line}`).join("\n");
}

function count(haystack: string, needle: string): number {
  return needle ? haystack.split(needle).length - 1 : 0;
}

interface Runner {
  config: { run<T>(call: Call<T>): Promise<T> };
}

export class MemoryStoreMemoryTool {
  readonly storeId: string;
  readonly #client: Runner;

  constructor(client: Runner, storeId: string) {
    this.#client = client;
    this.storeId = storeId;
  }

  /** The handlers `betaMemoryTool` takes, one per command. */
  get handlers() {
    return {
      view: (c: { path: string; view_range?: number[] }) => this.view(c.path, c.view_range),
      create: (c: { path: string; file_text: string }) => this.create(c.path, c.file_text),
      str_replace: (c: { path: string; old_str: string; new_str: string }) => this.strReplace(c.path, c.old_str, c.new_str),
      insert: (c: { path: string; insert_line: number; insert_text: string }) => this.insert(c.path, c.insert_line, c.insert_text),
      delete: (c: { path: string }) => this.delete(c.path),
      rename: (c: { old_path: string; new_path: string }) => this.rename(c.old_path, c.new_path),
    };
  }

  #run<T>(call: Call<T>): Promise<T> {
    return this.#client.config.run(call);
  }

  async #listing(prefix: string, depth: number): Promise<Json[]> {
    const items: Json[] = [];
    let page: string | null = null;
    for (;;) {
      const result: Page = await this.#run(ops.listStoreMemories({ storeId: this.storeId, pathPrefix: prefix, depth, limit: LIST_PAGE, page }));
      items.push(...result.data);
      if (!result.nextCursor) return items;
      page = result.nextCursor;
    }
  }

  /** The memory at this exact path (with content), or null. */
  async #find(target: string): Promise<Json | null> {
    const parent = path.dirname(target);
    const prefix = parent.endsWith("/") ? parent : `${parent}/`;
    for (const item of await this.#listing(prefix, 1)) {
      if (item.type === "memory" && item.path === target) {
        return this.#run(ops.getStoreMemory({ storeId: this.storeId, memoryId: item.id, view: "full" }));
      }
    }
    return null;
  }

  async #isDirectory(target: string): Promise<boolean> {
    if (!target) return true;
    const result = await this.#run(ops.listStoreMemories({ storeId: this.storeId, pathPrefix: `${target}/`, limit: 1 }));
    return result.data.length > 0;
  }

  async view(toolPath: string, viewRange?: number[] | null): Promise<string> {
    const target = storePath(toolPath);
    const memory = target ? await this.#find(target) : null;
    if (memory) {
      let lines = String(memory.content ?? "").split("\n");
      let start = 1;
      if (viewRange && viewRange.length === 2) {
        const first = Math.max(1, viewRange[0]) - 1;
        const last = viewRange[1] === -1 ? lines.length : viewRange[1];
        lines = lines.slice(first, last);
        start = first + 1;
      }
      return `Here's the content of ${toolPath} with line numbers:\n${numbered(lines, start)}`;
    }
    if (!(await this.#isDirectory(target))) {
      throw new MemoryToolError(`The path ${toolPath} does not exist. Please provide a valid path.`);
    }
    const prefix = `${target}/`;
    const entries = new Map<string, number>();
    for (const item of await this.#listing(prefix, 2)) {
      const parts = String(item.path).slice(prefix.length).split("/").filter(Boolean);
      if (!parts.length || parts[0].startsWith(".")) continue;
      const isPrefix = item.type === "memory_prefix";
      const deep = parts.length > 1 || isPrefix;
      entries.set(deep ? `${parts[0]}/` : parts[0], deep ? DIRECTORY_SIZE : item.content_size_bytes || 0);
      if (parts.length > 1 && !parts[1].startsWith(".")) {
        const second = `${parts[0]}/${parts[1]}`;
        if (isPrefix) entries.set(`${second}/`, DIRECTORY_SIZE);
        else entries.set(second, item.content_size_bytes || 0);
      }
    }
    const base = toolPath.replace(/\/+$/, "");
    const names = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const lines = [`${formatSize(DIRECTORY_SIZE)}\t${toolPath}`, ...names.map((name) => `${formatSize(entries.get(name)!)}\t${base}/${name}`)];
    return `Here're the files and directories up to 2 levels deep in ${toolPath}, excluding hidden items:\n${lines.join("\n")}`;
  }

  async create(toolPath: string, fileText: string): Promise<string> {
    const target = storePath(toolPath);
    if (!target) throw new MemoryToolError(`File ${toolPath} already exists`);
    try {
      await this.#run(ops.writeStoreMemory({ storeId: this.storeId, path: target, content: fileText, precondition: { type: "not_exists" } }));
    } catch (error) {
      if (error instanceof MemoryConflictError) throw new MemoryToolError(`File ${toolPath} already exists`);
      throw error;
    }
    return `File created successfully at: ${toolPath}`;
  }

  async #existingFile(toolPath: string): Promise<Json> {
    const target = storePath(toolPath);
    const memory = target ? await this.#find(target) : null;
    if (!memory) {
      if (await this.#isDirectory(target)) throw new MemoryToolError(`The path ${toolPath} is not a file.`);
      throw new MemoryToolError(`The path ${toolPath} does not exist. Please provide a valid path.`);
    }
    return memory;
  }

  async #replace(memory: Json, content: string): Promise<void> {
    // Conditional on the content just read: a concurrent edit is reported, not overwritten.
    try {
      await this.#run(ops.updateStoreMemory({
        storeId: this.storeId, memoryId: memory.id, content,
        precondition: { type: "content_sha256", content_sha256: memory.content_sha256 },
      }));
    } catch (error) {
      if (error instanceof MemoryConflictError) {
        throw new MemoryToolError(`The file ${memory.path} was changed concurrently; view it again and retry.`);
      }
      throw error;
    }
  }

  async strReplace(toolPath: string, oldStr: string, newStr: string): Promise<string> {
    const memory = await this.#existingFile(toolPath);
    const content = String(memory.content ?? "");
    const occurrences = count(content, oldStr);
    if (occurrences === 0) {
      throw new MemoryToolError(`No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${toolPath}.`);
    }
    if (occurrences > 1) {
      const lines: number[] = [];
      for (let at = content.indexOf(oldStr); at !== -1; at = content.indexOf(oldStr, at + 1)) {
        lines.push(content.slice(0, at).split("\n").length);
      }
      throw new MemoryToolError(
        `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(", ")}. Please ensure it is unique`,
      );
    }
    const changedLine = content.slice(0, content.indexOf(oldStr)).split("\n").length - 1;
    const newContent = content.replace(oldStr, () => newStr);
    await this.#replace(memory, newContent);
    const newLines = newContent.split("\n");
    const first = Math.max(0, changedLine - 2);
    const last = Math.min(newLines.length, changedLine + 3);
    return `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${numbered(newLines.slice(first, last), first + 1)}`;
  }

  async insert(toolPath: string, insertLine: number, insertText: string): Promise<string> {
    const memory = await this.#existingFile(toolPath);
    const lines = String(memory.content ?? "").split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    if (insertLine < 0 || insertLine > lines.length) {
      throw new MemoryToolError(`Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range [0, ${lines.length}].`);
    }
    lines.splice(insertLine, 0, insertText.replace(/\n+$/, ""));
    let newContent = lines.join("\n");
    if (!newContent.endsWith("\n")) newContent += "\n";
    await this.#replace(memory, newContent);
    return `The file ${toolPath} has been edited.`;
  }

  async #deleteAll(targets: Json[]): Promise<void> {
    for (const target of targets) {
      try {
        await this.#run(ops.deleteStoreMemory({ storeId: this.storeId, memoryId: target.id }));
      } catch (error) {
        if (!(error instanceof MemoryNotFoundError)) throw error; // deleted meanwhile: the outcome is the same
      }
    }
  }

  async delete(toolPath: string): Promise<string> {
    const target = storePath(toolPath);
    if (!target) throw new MemoryToolError("Cannot delete the /memories directory itself");
    const memory = await this.#find(target);
    const targets = memory ? [memory] : (await this.#listing(`${target}/`, 0)).filter((item) => item.type === "memory");
    if (!targets.length) throw new MemoryToolError(`The path ${toolPath} does not exist`);
    await this.#deleteAll(targets);
    return `Successfully deleted ${toolPath}`;
  }

  async rename(oldPath: string, newPath: string): Promise<string> {
    const from = storePath(oldPath);
    const to = storePath(newPath);
    if (!from) throw new MemoryToolError("Cannot rename the /memories directory itself");
    if (!to || (await this.#find(to)) || (await this.#isDirectory(to))) {
      throw new MemoryToolError(`The destination ${newPath} already exists`);
    }
    const memory = await this.#find(from);
    const moves: [Json, string][] = memory
      ? [[memory, to]]
      : (await this.#listing(`${from}/`, 0)).filter((item) => item.type === "memory").map((item) => [item, to + String(item.path).slice(from.length)]);
    if (!moves.length) throw new MemoryToolError(`The path ${oldPath} does not exist`);
    for (const [item, target] of moves) {
      try {
        await this.#run(ops.updateStoreMemory({ storeId: this.storeId, memoryId: item.id, path: target }));
      } catch (error) {
        if (error instanceof MemoryConflictError) throw new MemoryToolError(`The destination ${newPath} already exists`);
        throw error;
      }
    }
    return `Successfully renamed ${oldPath} to ${newPath}`;
  }

  async clearAllMemory(): Promise<string> {
    await this.#deleteAll((await this.#listing("/", 0)).filter((item) => item.type === "memory"));
    return "All memory cleared";
  }
}
