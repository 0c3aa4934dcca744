/**
 * The MCP servers a run starts with: each `--mcp-config` (a file, or the JSON itself, in
 * Claude Code's shape) and the `mcpServers` of mend's settings file (`$MEND_HOME/settings.json`,
 * Qwen Code's shape), the flags winning by name; `--strict-mcp-config` leaves the settings out
 * and `--allowed-mcp-server-names` keeps only those named. A config that cannot be read is a
 * usage error; one entry that makes no sense is a server listed as failed.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MendError } from '../errors.js';
import { mergeServerSpecs, parseMcpConfigText, serverSpecsOf, type McpServerSpec, type SpecResult } from '../tools/mcp/mcp-config.js';
import { z } from 'zod';

export interface McpServerSelection {
  specs: McpServerSpec[];
  failed: { name: string; error: string }[];
}

export interface McpFlags {
  mcpConfigs: readonly string[];
  allowedMcpServerNames: readonly string[] | undefined;
  strictMcpConfig: boolean;
}

const SettingsSchema = z.looseObject({ mcpServers: z.record(z.string(), z.unknown()).optional() });

function configText(value: string, cwd: string): { text: string; origin: string } {
  const trimmed = value.trim();
  if (trimmed.startsWith('{')) return { text: trimmed, origin: '--mcp-config JSON' };
  const path = resolve(cwd, trimmed);
  try {
    return { text: readFileSync(path, 'utf8'), origin: `--mcp-config ${path}` };
  } catch (error) {
    throw new MendError('usage', `--mcp-config ${trimmed}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The settings file's servers; a missing file is none, an unreadable or malformed one a usage error (said, not guessed at). */
function settingsServers(home: string): SpecResult[] {
  const path = join(home, 'settings.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new MendError('usage', `${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? ''})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new MendError('usage', `${path} is not JSON: ${(error as Error).message}`);
  }
  const parsed = SettingsSchema.safeParse(value);
  if (!parsed.success) throw new MendError('usage', `${path}: "mcpServers" must be an object of servers`);
  return serverSpecsOf(parsed.data.mcpServers ?? {});
}

export function selectMcpServers(flags: McpFlags, io: { cwd: string; home: string }): McpServerSelection {
  const fromFlags: SpecResult[] = [];
  for (const value of flags.mcpConfigs) {
    const { text, origin } = configText(value, io.cwd);
    const parsed = parseMcpConfigText(text, origin);
    if (!parsed.ok) throw new MendError('usage', parsed.error);
    fromFlags.push(...parsed.results);
  }
  const fromSettings = flags.strictMcpConfig ? [] : settingsServers(io.home);
  const allowed = flags.allowedMcpServerNames;
  const keep = (name: string) => allowed === undefined || allowed.includes(name);
  const ok = (results: SpecResult[]) => results.flatMap((r) => (r.ok && r.spec.transport.kind !== 'sdk' ? [r.spec] : []));
  const failed = [...fromSettings, ...fromFlags].flatMap((r) =>
    !r.ok
      ? [{ name: r.name, error: r.error }]
      : r.spec.transport.kind === 'sdk'
        ? [{ name: r.spec.name, error: 'an sdk server exists only inside a host (pass it in initialize)' }]
        : [],
  );
  return {
    specs: mergeServerSpecs([ok(fromSettings), ok(fromFlags)], allowed),
    failed: failed.filter((f) => keep(f.name)),
  };
}
