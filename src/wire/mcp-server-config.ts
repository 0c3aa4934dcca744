/**
 * One MCP server entry as hosts and users write it, every shape at once (the one config
 * schema: `--mcp-config`, the settings file, `initialize`, the daemon's `mcpServers`):
 * - Claude: `{command, args, env}` | `{type: "http", url, headers}` | `{type: "sse", url, headers}` | `{type: "sdk", name}`;
 * - Qwen: `{command, args, env, cwd}` | `{httpUrl, headers}` (Streamable HTTP) | `{url}` (SSE), plus `timeout`,
 *   `includeTools`, `excludeTools` (`trust`, `description` and the rest are accepted and ignored).
 * Pure zod, so the SDK and the wire schemas may use it; src/tools/mcp/mcp-config.ts reads it into a spec.
 */
import { z } from 'zod';

const StringMap = z.record(z.string(), z.string());

export const McpServerEntrySchema = z.looseObject({
  type: z.string().optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: StringMap.optional(),
  cwd: z.string().optional(),
  url: z.string().optional(),
  httpUrl: z.string().optional(),
  headers: StringMap.optional(),
  timeout: z.number().int().positive().optional(),
  includeTools: z.array(z.string()).optional(),
  excludeTools: z.array(z.string()).optional(),
});
export type McpServerEntry = z.infer<typeof McpServerEntrySchema>;

/** `{name: entry}`: the `mcpServers` object of a config file, the settings file or a daemon request. */
export const McpServersSchema = z.record(z.string(), McpServerEntrySchema);
