/**
 * `mend repair`'s one piece of I/O: reads the source again, checks it is the file the plan
 * was made from (SHA-256), has the owner's writer serialise the plan, and writes the new
 * session beside the source with an atomic, no-clobber write (temp file, fsync, link,
 * folder fsync). The source is only ever opened for reading.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { MendError } from '../../errors.js';
import type { SessionRecoveryPlan } from '../../recovery/plan-types.js';
import { writeFileAtomic } from '../../tools/atomic-write.js';
import type { ForeignAgent } from '../adapter.js';
import { repairClaude } from '../claude/repair-claude.js';
import { repairCodex } from '../codex/repair-codex.js';
import { repairGemini } from '../gemini/repair-gemini.js';
import { adapterFor } from '../registry.js';
import type { OwnerRepair, OwnerRepairWriter } from './repair-types.js';

const WRITERS: Record<ForeignAgent, OwnerRepairWriter> = { claude: repairClaude, codex: repairCodex, gemini: repairGemini };

export interface RepairFileInput {
  /** The source file (absolute). */
  path: string;
  agent: ForeignAgent;
  plan: SessionRecoveryPlan;
  /** SHA-256 (hex) of the bytes the plan was made from, when known. */
  sha256?: string | undefined;
}

/**
 * Gemini keeps no cwd in a session: its project folder (`tmp/<project>/`, the parent of
 * `chats/`) names the project root in `.project_root`.
 */
async function geminiProjectRoot(path: string): Promise<string | null> {
  const text = await readFile(join(dirname(dirname(path)), '.project_root'), 'utf8').catch(() => null);
  return text?.trim() || null;
}

export async function repairForeignFile(input: RepairFileInput, clock: { now: () => Date } = { now: () => new Date() }): Promise<OwnerRepair> {
  let bytes: Buffer;
  try {
    bytes = await readFile(input.path);
  } catch (error) {
    throw new MendError('session_read_failed', `Could not read ${input.path}: ${(error as Error).message}`, { path: input.path });
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (input.sha256 !== undefined && input.sha256 !== sha256) {
    throw new MendError('stale_plan', `${input.path} changed after it was planned; run mend repair again`, { path: input.path });
  }
  const read = adapterFor(input.agent).read(bytes);
  const session = input.agent === 'gemini' && read.cwd === null ? { ...read, cwd: await geminiProjectRoot(input.path) } : read;
  let repair: OwnerRepair;
  try {
    repair = WRITERS[input.agent]({
      source: { path: input.path, bytes },
      session,
      plan: input.plan,
      newSessionId: randomUUID(),
      now: clock.now().toISOString(),
      newRowId: randomUUID,
    });
  } catch (error) {
    throw new MendError('usage', `mend repair cannot write this ${input.agent} session: ${(error as Error).message}`, { path: input.path });
  }
  const mode = (await stat(input.path)).mode & 0o777;
  try {
    await writeFileAtomic(repair.path, repair.text, { mode, noClobber: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new MendError('session_exists', `${repair.path} exists already`, { path: repair.path });
    throw new MendError('session_write_failed', `Could not write ${repair.path}: ${(error as Error).message}`, { path: repair.path }, { cause: error });
  }
  return repair;
}
