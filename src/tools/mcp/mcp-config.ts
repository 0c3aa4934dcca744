/**
 * MCP server configuration: the shapes hosts and users write (Claude Code's `--mcp-config`
 * and `initialize`, Qwen Code's `mcpServers` settings, SDK servers) read into one spec.
 * Inbound tolerant (unknown keys are kept out of the way), errors as values: one bad entry
 * does not sink the others.
 */
import { z } from 'zod';
import { McpServerEntrySchema, type McpServerEntry } from '../../wire/mcp-server-config.js';

export type McpTransportSpec =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string | undefined }
  | { kind: 'http'; url: string; headers: Record<string, string> }
  | { kind: 'sse'; url: string; headers: Record<string, string> }
  /** An in-process server of the host: its messages travel as `mcp_message` control requests. */
  | { kind: 'sdk' };

export interface McpServerSpec {
  name: string;
  transport: McpTransportSpec;
  /** How long one tool call may take before it ends with an error result (ms). */
  timeoutMs?: number | undefined;
  /** Qwen Code's per-server filters (tool names as the server gives them). */
  includeTools?: string[] | undefined;
  excludeTools?: string[] | undefined;
}

/** A tool call that runs longer than this ends with an error result (per server: `timeout`). */
export const DEFAULT_MCP_TOOL_TIMEOUT_MS = 10 * 60_000;

export { McpServerEntrySchema, type McpServerEntry };

/** `{"mcpServers": {...}}` (a config file) — the object of entries is read entry by entry. */
export const McpConfigFileSchema = z.looseObject({ mcpServers: z.record(z.string(), z.unknown()) });

export type SpecResult = { ok: true; spec: McpServerSpec } | { ok: false; name: string; error: string };

function validUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function transportOf(entry: McpServerEntry): McpTransportSpec | string {
  const type = entry.type?.toLowerCase();
  if (type === 'sdk') return { kind: 'sdk' };
  if (type === 'http' || type === 'streamable-http' || (type === undefined && entry.httpUrl !== undefined)) {
    const url = entry.httpUrl ?? entry.url;
    if (url === undefined || !validUrl(url)) return `an http server needs an http(s) "url" (got ${JSON.stringify(url)})`;
    return { kind: 'http', url, headers: entry.headers ?? {} };
  }
  if (type === 'sse' || (type === undefined && entry.url !== undefined)) {
    if (entry.url === undefined || !validUrl(entry.url)) return `an sse server needs an http(s) "url" (got ${JSON.stringify(entry.url)})`;
    return { kind: 'sse', url: entry.url, headers: entry.headers ?? {} };
  }
  if (type === undefined || type === 'stdio') {
    if (entry.command === undefined) return 'a stdio server needs a "command"';
    return { kind: 'stdio', command: entry.command, args: entry.args ?? [], env: entry.env ?? {}, cwd: entry.cwd };
  }
  return `unknown server type ${JSON.stringify(entry.type)} (stdio, http, sse or sdk)`;
}

const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** One named entry as a spec, or why not. */
export function serverSpecOf(name: string, raw: unknown): SpecResult {
  if (!SERVER_NAME.test(name) || name.includes('__')) {
    return { ok: false, name, error: `server name ${JSON.stringify(name)} must be 1-64 letters, digits, "_", "-" or "." without "__"` };
  }
  const parsed = McpServerEntrySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, name, error: `invalid config: ${issue ? `${issue.path.join('.') || 'entry'}: ${issue.message}` : 'not an object'}` };
  }
  const transport = transportOf(parsed.data);
  if (typeof transport === 'string') return { ok: false, name, error: transport };
  return {
    ok: true,
    spec: {
      name,
      transport,
      ...(parsed.data.timeout !== undefined ? { timeoutMs: parsed.data.timeout } : {}),
      ...(parsed.data.includeTools ? { includeTools: parsed.data.includeTools } : {}),
      ...(parsed.data.excludeTools ? { excludeTools: parsed.data.excludeTools } : {}),
    },
  };
}

/** Every entry of a `{name: entry}` object. */
export function serverSpecsOf(servers: Record<string, unknown>): SpecResult[] {
  return Object.entries(servers).map(([name, raw]) => serverSpecOf(name, raw));
}

/** A `--mcp-config` value: JSON text of `{"mcpServers": {...}}` (the caller reads a file's text first). */
export function parseMcpConfigText(text: string, origin: string): { ok: true; results: SpecResult[] } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `${origin} is not JSON: ${(error as Error).message}` };
  }
  const parsed = McpConfigFileSchema.safeParse(value);
  if (!parsed.success) return { ok: false, error: `${origin} must be an object with "mcpServers": {name: {command, args, env} | {type, url, headers}}` };
  return { ok: true, results: serverSpecsOf(parsed.data.mcpServers) };
}

/** Later sources win by name (the order the caller lists them in); `allowed` (when given) keeps only those names. */
export function mergeServerSpecs(sources: readonly (readonly McpServerSpec[])[], allowed?: readonly string[]): McpServerSpec[] {
  const byName = new Map<string, McpServerSpec>();
  for (const source of sources) for (const spec of source) byName.set(spec.name, spec);
  return [...byName.values()].filter((spec) => allowed === undefined || allowed.includes(spec.name));
}
