/**
 * Options -> the CLI's command line. Pure. The CLI stays the one judge of which
 * combinations are valid: a bad combination comes back as its usage error.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from './types.js';

export const STREAM_JSON_ARGS: readonly string[] = ['--input-format', 'stream-json', '--output-format', 'stream-json'];

/**
 * Every value travels as ONE argument `--flag=value`, so no value can become a flag of
 * its own (`model: '--approval-mode=yolo'` once started mend in yolo); the CLI refuses
 * flag-like values for options that name things.
 */
export function optionsToArgs(o: Options): string[] {
  const args = [...STREAM_JSON_ARGS];
  const value = (flag: string, v: string | undefined): void => {
    if (v !== undefined) args.push(`--${flag}=${v}`);
  };
  if (o.continue) args.push('--continue');
  value('resume', o.resume);
  if (o.forkSession) args.push('--fork-session');
  value('session-id', o.sessionId);
  value('model', o.model);
  value('provider', o.provider);
  value('base-url', o.baseUrl);
  value('scripted-responses', o.scriptedResponses);
  value('approval-mode', o.approvalMode);
  if (o.allowedTools !== undefined && o.allowedTools.length > 0) value('allowed-tools', o.allowedTools.join(','));
  for (const dir of o.addDirs ?? []) value('add-dir', dir);
  value('system-prompt', o.systemPrompt);
  value('append-system-prompt', o.appendSystemPrompt);
  if (o.includePartialMessages) args.push('--include-partial-messages');
  if (o.allowAutoContinue) args.push('--auto-continue');
  if (o.extraArgs) args.push(...o.extraArgs);
  return args;
}

/** Walks up from this module to the package root that holds bin/mend.js (works from src/ and from dist/src/). */
export function defaultExecutable(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ;) {
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
