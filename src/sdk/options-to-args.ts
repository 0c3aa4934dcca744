/**
 * Options -> the CLI's command line. Pure. The CLI stays the one judge of which
 * combinations are valid: a bad combination comes back as its usage error.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from './types.js';

export const STREAM_JSON_ARGS: readonly string[] = ['--input-format', 'stream-json', '--output-format', 'stream-json'];

export function optionsToArgs(o: Options): string[] {
  const args = [...STREAM_JSON_ARGS];
  if (o.continue) args.push('--continue');
  if (o.resume !== undefined) args.push('--resume', o.resume);
  if (o.forkSession) args.push('--fork-session');
  if (o.sessionId !== undefined) args.push('--session-id', o.sessionId);
  if (o.model !== undefined) args.push('--model', o.model);
  if (o.provider !== undefined) args.push('--provider', o.provider);
  if (o.baseUrl !== undefined) args.push('--base-url', o.baseUrl);
  if (o.scriptedResponses !== undefined) args.push('--scripted-responses', o.scriptedResponses);
  if (o.approvalMode !== undefined) args.push('--approval-mode', o.approvalMode);
  if (o.allowedTools !== undefined && o.allowedTools.length > 0) args.push(`--allowed-tools=${o.allowedTools.join(',')}`);
  if (o.includePartialMessages) args.push('--include-partial-messages');
  if (o.allowAutoContinue) args.push('--auto-continue');
  if (o.extraArgs) args.push(...o.extraArgs);
  return args;
}

/** Walks up from this module to the package root that holds bin/mend.js (works from src/ and from dist/src/). */
export function defaultExecutable(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; ) {
    const candidate = join(dir, 'bin', 'mend.js');
    if (existsSync(candidate) && existsSync(join(dir, 'package.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find bin/mend.js above ${from}; pass options.pathToExecutable`);
    dir = parent;
  }
}

/** A JavaScript file runs with the current Node; anything else is executed directly. */
export function commandFor(executable: string, args: string[]): { file: string; args: string[] } {
  return /\.(?:c|m)?js$/.test(executable) ? { file: process.execPath, args: [executable, ...args] } : { file: executable, args };
}

export function mergeEnv(overrides: Record<string, string | undefined> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(overrides ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}
