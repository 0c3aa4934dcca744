/**
 * Qwen Code 0.24.4 beside mend, when it happens to be installed (it is never a
 * dependency): `QWEN_CODE_BIN` or `qwen` on PATH, accepted only at that version
 * (the published comparison figures are of 0.24.4). Timed like mend: spawn to its first
 * stdout line on the same file, laid out where Qwen Code looks for it
 * (`$HOME/.qwen/projects/<project>/chats/<id>.jsonl`, the layout mend shares).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readSync, symlinkSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { sessionLogPath } from '../src/session/session-paths.js';

export const QWEN_CODE_VERSION = '0.24.4';

export interface QwenCode {
  bin: string;
  version: string;
}

export function findQwenCode(): QwenCode | null {
  const candidates = process.env['QWEN_CODE_BIN'] ? [process.env['QWEN_CODE_BIN']] : (process.env['PATH'] ?? '').split(delimiter).map((d) => join(d, 'qwen'));
  for (const bin of candidates) {
    if (!existsSync(bin)) continue;
    try {
      const version = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
      if (version.includes(QWEN_CODE_VERSION)) return { bin, version };
    } catch {
      // Not runnable here: treated as not installed.
    }
  }
  return null;
}

/**
 * Arguments, environment and working directory for resuming `sessionId` headless with
 * stream-json output; `QWEN_CODE_ARGS` (JSON array, `{id}` replaced) overrides the
 * arguments. Qwen Code resumes a session only from the project its first record names
 * (`cwd`), so it runs there (the directory is created when missing) and the file is
 * linked under that project's chats directory.
 */
export function qwenCodeTiming(home: string, file: string, sessionId: string): { args: string[]; env: NodeJS.ProcessEnv; cwd: string } {
  const first = readFirstLine(file);
  const recorded = (JSON.parse(first) as { cwd?: unknown }).cwd;
  if (typeof recorded !== 'string') throw new Error(`${file}: its first record names no cwd, which Qwen Code needs to resume it`);
  mkdirSync(recorded, { recursive: true });
  const target = sessionLogPath(join(home, '.qwen'), recorded, sessionId);
  if (!existsSync(target)) {
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(file, target);
  }
  const template = process.env['QWEN_CODE_ARGS']
    ? (JSON.parse(process.env['QWEN_CODE_ARGS']) as string[])
    : ['--resume', '{id}', '--output-format', 'stream-json', '--prompt', 'continue'];
  return { args: template.map((a) => a.replaceAll('{id}', sessionId)), env: { ...process.env, HOME: home }, cwd: recorded };
}

function readFirstLine(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(1 << 16);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.toString('utf8', 0, n);
    const nl = text.indexOf('\n');
    return nl < 0 ? text : text.slice(0, nl);
  } finally {
    closeSync(fd);
  }
}
