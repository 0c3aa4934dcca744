/**
 * ACP's `mcpServers` (session/new, session/load, session/resume) as mend's server specs:
 * stdio `{name, command, args, env: [{name, value}]}`, `{type: "http" | "sse", name, url,
 * headers: [{name, value}]}`. An entry that makes no sense is returned as failed, by name.
 */
import { z } from 'zod';
import { serverSpecOf, type SpecResult } from '../../tools/mcp/mcp-config.js';

const Pairs = z.array(z.looseObject({ name: z.string(), value: z.string() })).optional();
const AcpServerSchema = z.looseObject({
  name: z.string(),
  type: z.string().optional(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: Pairs,
  url: z.string().optional(),
  headers: Pairs,
});

const toRecord = (pairs: { name: string; value: string }[] | undefined): Record<string, string> =>
  Object.fromEntries((pairs ?? []).map((p) => [p.name, p.value]));

export function acpServerSpecs(servers: unknown): SpecResult[] {
  if (!Array.isArray(servers)) return [];
  return servers.map((raw, i) => {
    const parsed = AcpServerSchema.safeParse(raw);
    if (!parsed.success) return { ok: false, name: `mcpServers[${i}]`, error: 'not an ACP MCP server entry (name, and command or url)' };
    const { name, type, command, args, env, url, headers } = parsed.data;
    return serverSpecOf(
      name,
      command !== undefined && type === undefined
        ? { command, args: args ?? [], env: toRecord(env) }
        : { type: type ?? 'http', url, headers: toRecord(headers) },
    );
  });
}
