/**
 * Where each agent keeps a project's sessions, and the session files there that
 * belong to a project. The homes are values the composition root reads from the
 * environment (src/cli/foreign-homes-env.ts): nothing here reads it.
 *
 * - Claude Code: `<config dir>/projects/<cwd with every non-alphanumeric as '-'>/<uuid>.jsonl`
 *   (config dir: CLAUDE_CONFIG_DIR, else ~/.claude).
 * - Codex: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`, the project
 *   named by `session_meta.cwd` (CODEX_HOME, else ~/.codex).
 * - Gemini CLI: `<gemini dir>/tmp/<project>/chats/session-*.jsonl|.json`, the project
 *   folder named in `<gemini dir>/projects.json` (older versions: the SHA-256 of the
 *   project root) (gemini dir: `$GEMINI_CLI_HOME/.gemini`, else ~/.gemini).
 */
import { createHash } from 'node:crypto';
import { open, readFile, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { ForeignAgent } from './adapter.js';

export interface ForeignHomes {
  /** Claude Code's config dir (holds `projects/`). */
  claude: string;
  /** CODEX_HOME (holds `sessions/`). */
  codex: string;
  /** Gemini CLI's `.gemini` dir (holds `tmp/` and `projects.json`). */
  gemini: string;
}

export interface ForeignSessionFile {
  agent: ForeignAgent;
  path: string;
  size: number;
  mtimeMs: number;
}

/** Claude Code's folder name for a directory: every character that is not a letter or digit becomes '-'. */
export function claudeProjectSlug(dir: string): string {
  return dir.replace(/[^a-zA-Z0-9]/g, '-');
}

async function files(dir: string, keep: (name: string) => boolean): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && keep(e.name)).map((e) => join(dir, e.name));
}

async function subdirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
}

async function described(agent: ForeignAgent, paths: string[]): Promise<ForeignSessionFile[]> {
  const out: ForeignSessionFile[] = [];
  for (const path of paths) {
    const st = await stat(path).catch(() => null);
    if (st?.isFile()) out.push({ agent, path, size: st.size, mtimeMs: st.mtimeMs });
  }
  return out;
}

export async function claudeSessions(homes: ForeignHomes, dirs: readonly string[]): Promise<ForeignSessionFile[]> {
  const folders = [...new Set(dirs.map((d) => join(homes.claude, 'projects', claudeProjectSlug(d))))];
  const paths = (await Promise.all(folders.map((f) => files(f, (n) => n.endsWith('.jsonl'))))).flat();
  return described('claude', paths);
}

const CODEX_HEAD = 64 * 1024;

/** The cwd a rollout's `session_meta` names (its first line), or null. */
async function codexCwd(path: string): Promise<string | null> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const buffer = Buffer.alloc(CODEX_HEAD);
    const { bytesRead } = await handle.read(buffer, 0, CODEX_HEAD, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    const first = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
    const value = JSON.parse(first) as { type?: unknown; payload?: { cwd?: unknown } };
    return value.type === 'session_meta' && typeof value.payload?.cwd === 'string' ? value.payload.cwd : null;
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

export async function codexSessions(homes: ForeignHomes, dirs: readonly string[]): Promise<ForeignSessionFile[]> {
  const wanted = new Set(dirs.map((d) => resolve(d)));
  const paths: string[] = [];
  for (const year of await subdirs(join(homes.codex, 'sessions'))) {
    for (const month of await subdirs(year)) {
      for (const day of await subdirs(month)) {
        for (const path of await files(day, (n) => n.startsWith('rollout-') && n.endsWith('.jsonl'))) {
          const cwd = await codexCwd(path);
          if (cwd !== null && wanted.has(resolve(cwd))) paths.push(path);
        }
      }
    }
  }
  return described('codex', paths);
}

const ProjectsFileSchema = z.looseObject({ projects: z.record(z.string(), z.string()) });

export async function geminiSessions(homes: ForeignHomes, dirs: readonly string[]): Promise<ForeignSessionFile[]> {
  const registry = ProjectsFileSchema.safeParse(
    await readFile(join(homes.gemini, 'projects.json'), 'utf8')
      .then((t) => JSON.parse(t) as unknown)
      .catch(() => null),
  );
  const names = new Set<string>();
  for (const dir of dirs) {
    const root = resolve(dir);
    const short = registry.success ? registry.data.projects[root] : undefined;
    if (short) names.add(short);
    names.add(createHash('sha256').update(root).digest('hex'));
  }
  const paths: string[] = [];
  for (const name of names) {
    paths.push(...(await files(join(homes.gemini, 'tmp', name, 'chats'), (n) => n.startsWith('session-') && (n.endsWith('.jsonl') || n.endsWith('.json')))));
  }
  return described('gemini', paths);
}

/** The session files of a project (its root and the directory it was opened from) in the given agents' homes, newest first. */
export async function listForeignSessionFiles(homes: ForeignHomes, dirs: readonly string[], agents: readonly ForeignAgent[]): Promise<ForeignSessionFile[]> {
  const found: ForeignSessionFile[] = [];
  if (agents.includes('claude')) found.push(...(await claudeSessions(homes, dirs)));
  if (agents.includes('codex')) found.push(...(await codexSessions(homes, dirs)));
  if (agents.includes('gemini')) found.push(...(await geminiSessions(homes, dirs)));
  return found.sort((a, b) => b.mtimeMs - a.mtimeMs || a.path.localeCompare(b.path));
}

/**
 * The file of another agent's session of this project named by its own session id (what
 * `claude --resume ID`, `codex resume ID` and `gemini --resume ID` take), or null.
 */
export async function findForeignSessionById(homes: ForeignHomes, dirs: readonly string[], id: string): Promise<ForeignSessionFile | null> {
  for (const file of await claudeSessions(homes, dirs)) if (file.path.endsWith(`/${id}.jsonl`)) return file;
  for (const file of await codexSessions(homes, dirs)) if (file.path.endsWith(`-${id}.jsonl`)) return file;
  for (const file of await geminiSessions(homes, dirs)) {
    if (!file.path.includes(id.slice(0, 8))) continue;
    const head = await readFile(file.path, 'utf8').catch(() => '');
    if (new RegExp(`"sessionId"\\s*:\\s*"${id}"`).test(head.slice(0, 4096))) return file;
  }
  return null;
}
