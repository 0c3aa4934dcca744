/**
 * A checkpoint on disk: one file in mend's cache (never beside the log it describes),
 * written to a temporary name and renamed over the old one (no fsync: it is a cache; a
 * crash leaves the old file, a missing one or a damaged one, and each is read as none).
 *
 * Layout: the magic, the format version (u32), the header's length (u32) and CRC-32
 * (u32), the header (JSON: the log's identity and the prefix's summary), then the
 * prefix's uuid filter (its CRC-32 is in the header; it is read only when the log grew).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import type { LogIdentity } from './log-identity.js';
import type { OutlinePlan } from '../outline-plan.js';
import type { LogFacts, PrefixSummary } from './prefix-summary.js';
import { UuidBloom } from './uuid-bloom.js';

/** Bump when anything about what a checkpoint holds or means changes (a file's or a PostgreSQL row's body): older ones are then ignored. */
export const CHECKPOINT_VERSION = 5;
const MAGIC = Buffer.from('mendckpt', 'latin1');
const FIXED = MAGIC.length + 12;

export interface CheckpointHeader {
  log: LogIdentity;
  summary: PrefixSummary;
  bloom: { bytes: number; capacity: number; count: number; crc: number };
  /** The plan of the whole log as identified (nobody holding it, these options) and its listing facts; null when not kept. */
  result: { allowAutoContinue: boolean; planned: OutlinePlan; facts: LogFacts } | null;
}

export type ReadHeader = { header: CheckpointHeader } | { missing: true } | { damaged: string };

export async function readCheckpointHeader(file: string): Promise<ReadHeader> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { missing: true };
    return { damaged: (error as Error).message };
  }
  try {
    const fixed = Buffer.alloc(FIXED);
    const { bytesRead } = await handle.read(fixed, 0, FIXED, 0);
    if (bytesRead < FIXED || !fixed.subarray(0, MAGIC.length).equals(MAGIC)) return { damaged: 'not a checkpoint (torn or foreign)' };
    const version = fixed.readUInt32LE(MAGIC.length);
    if (version !== CHECKPOINT_VERSION) return { damaged: `checkpoint version ${version}, this mend reads ${CHECKPOINT_VERSION}` };
    const length = fixed.readUInt32LE(MAGIC.length + 4);
    const crc = fixed.readUInt32LE(MAGIC.length + 8);
    const body = Buffer.alloc(length);
    const read = await handle.read(body, 0, length, FIXED);
    if (read.bytesRead < length || crc32(body) !== crc) return { damaged: 'checkpoint header torn' };
    return { header: JSON.parse(body.toString('utf8')) as CheckpointHeader };
  } catch (error) {
    return { damaged: (error as Error).message };
  } finally {
    await handle.close();
  }
}

/** The uuid filter after the header, or null when it is torn. */
export async function readCheckpointBloom(file: string, header: CheckpointHeader): Promise<UuidBloom | null> {
  const handle = await open(file, 'r').catch(() => null);
  if (handle === null) return null;
  try {
    const fixed = Buffer.alloc(FIXED);
    await handle.read(fixed, 0, FIXED, 0);
    const at = FIXED + fixed.readUInt32LE(MAGIC.length + 4);
    const bits = new Uint8Array(header.bloom.bytes);
    const { bytesRead } = await handle.read(bits, 0, bits.length, at);
    if (bytesRead < bits.length || crc32(bits) !== header.bloom.crc) return null;
    return UuidBloom.from(bits, header.bloom.capacity, header.bloom.count);
  } finally {
    await handle.close();
  }
}

/** Temp file + rename; never fsynced. */
export async function writeCheckpoint(
  file: string,
  log: LogIdentity,
  summary: PrefixSummary,
  bloom: UuidBloom,
  result: CheckpointHeader['result'],
): Promise<void> {
  const header: CheckpointHeader = {
    log,
    summary,
    bloom: { bytes: bloom.bits.length, capacity: bloom.capacity, count: bloom.count, crc: crc32(bloom.bits) },
    result,
  };
  const body = Buffer.from(JSON.stringify(header), 'utf8');
  const fixed = Buffer.alloc(FIXED);
  MAGIC.copy(fixed);
  fixed.writeUInt32LE(CHECKPOINT_VERSION, MAGIC.length);
  fixed.writeUInt32LE(body.length, MAGIC.length + 4);
  fixed.writeUInt32LE(crc32(body), MAGIC.length + 8);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, Buffer.concat([fixed, body, bloom.bits]), { mode: 0o600 });
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
