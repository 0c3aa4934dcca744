/**
 * The line splitter's file sources (the splitter itself, wire/line-splitter.ts, does no
 * I/O): a log read in 64 KiB blocks straight into the splitter's reused buffer, from the
 * start or from a line start mid-file, and the same reads over bytes in memory for tests.
 * Each source comes two ways: runs of complete lines (the outline pass walks a block
 * itself) and numbered lines (the reader).
 */
import { constants, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { BlockSplitter, DEFAULT_BLOCK_SIZE, LineSplitter, type BlockReader, type OnLine, type OnLineBlock, type SplitEnd } from '../wire/line-splitter.js';

export { DEFAULT_BLOCK_SIZE, type OnLineBlock } from '../wire/line-splitter.js';

export type LineBlocksEnd = SplitEnd;

/**
 * The line in `bytes[start, end)` as a string. Decoding a line alone gives the same
 * string as decoding its whole block and cutting at the newline: '\n' ends any unfinished
 * UTF-8 sequence either way (it is never part of one). Each line's own string is one-byte
 * when the line is ASCII, where a decoded block with one non-ASCII character is two-byte
 * throughout; JSON.parse of per-line strings measured 15% faster on Qwen-format logs.
 */
export function decodeLine(bytes: Buffer, start: number, end: number): string {
  return bytes.toString('utf8', start, end);
}

/** Either splitter: both read blocks the same way. */
interface Splitter {
  fill(read: BlockReader): number;
  end(): SplitEnd;
  readonly stopped: boolean;
}

/**
 * Calls `onBlock` with every run of complete lines, '\n' included, in file order: its
 * raw bytes (a view of the reused buffer: valid only during the call) and the byte
 * offset in the file where that run starts.
 * I/O errors are thrown as they come (the caller maps them to its own errors).
 */
export function readLineBlocks(path: string, onBlock: OnLineBlock, blockSize = DEFAULT_BLOCK_SIZE): Promise<LineBlocksEnd> {
  return readFile(path, new BlockSplitter(onBlock, { blockSize }));
}

/** Every line of a file, numbered, the last one without '\n' included (terminated false). */
export function readFileLines(path: string, onLine: OnLine, blockSize = DEFAULT_BLOCK_SIZE): Promise<LineBlocksEnd> {
  return readFile(path, new LineSplitter(onLine, { blockSize }));
}

async function readFile(path: string, splitter: Splitter): Promise<LineBlocksEnd> {
  const handle = await openRegularFile(path);
  try {
    // Synchronous reads on the opened descriptor: an awaited read per 64 KiB block left the
    // thread idle for a third of an 85 MB index pass (one thread-pool round trip a block).
    // The loop yields to the event loop every few MiB, so a daemon reading a large log
    // still serves its other sessions.
    const fd = handle.fd;
    return await drive(splitter, (buffer, at, length) => readSync(fd, buffer, at, length, null));
  } finally {
    await handle.close();
  }
}

/**
 * The blocks of an open file from byte `position` (a line start) on, read at explicit
 * positions (another thread may read the same descriptor); offsets are the file's.
 */
export function readLineBlocksFrom(fd: number, position: number, onBlock: OnLineBlock, blockSize = DEFAULT_BLOCK_SIZE): Promise<LineBlocksEnd> {
  let at = position;
  const read: BlockReader = (buffer, offset, length) => {
    const n = readSync(fd, buffer, offset, length, at);
    at += n;
    return n;
  };
  return drive(new BlockSplitter(onBlock, { blockSize, base: position }), read);
}

/**
 * Where the first line that starts at or after byte `position` starts: right after the
 * first '\n' from `position - 1` on (the file's size when there is none).
 */
export function lineStartFrom(fd: number, position: number): number {
  if (position === 0) return 0;
  const buffer = Buffer.allocUnsafe(DEFAULT_BLOCK_SIZE);
  for (let at = position - 1; ;) {
    const n = readSync(fd, buffer, 0, buffer.length, at);
    if (n === 0) return at;
    const nl = buffer.subarray(0, n).indexOf(0x0a);
    if (nl !== -1) return at + nl + 1;
    at += n;
  }
}

/**
 * The same blocks from bytes in memory, through the same block reads: tests read
 * thousands of truncated logs without temp files, and still exercise the code a file
 * read runs.
 */
export function bytesLineBlocks(bytes: Buffer, onBlock: OnLineBlock, blockSize = DEFAULT_BLOCK_SIZE): Promise<LineBlocksEnd> {
  return drive(new BlockSplitter(onBlock, { blockSize }), bytesReader(bytes));
}

/** Numbered lines from bytes in memory, read in blocks as from a file. */
export function bytesLines(bytes: Buffer, onLine: OnLine, blockSize = DEFAULT_BLOCK_SIZE): Promise<LineBlocksEnd> {
  return drive(new LineSplitter(onLine, { blockSize }), bytesReader(bytes));
}

function bytesReader(bytes: Buffer): BlockReader {
  let position = 0;
  return (buffer, at, length) => {
    const n = bytes.copy(buffer, at, position, position + length);
    position += n;
    return n;
  };
}

/**
 * Opens a log for reading only if it is a regular file, judged on the opened descriptor
 * (no check-then-open race). O_NONBLOCK: opening a FIFO must not hang; a FIFO or device
 * at a session path is reported, never read.
 */
async function openRegularFile(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const stat = await handle.stat();
  if (stat.isFile()) return handle;
  await handle.close();
  const what = stat.isFIFO()
    ? 'a FIFO'
    : stat.isCharacterDevice() || stat.isBlockDevice()
      ? 'a device'
      : stat.isDirectory()
        ? 'a directory'
        : stat.isSocket()
          ? 'a socket'
          : 'not a file';
  throw Object.assign(new Error(`not a regular file (${what})`), { code: 'ENOTREGULAR' });
}

/** Bytes read between two turns of the event loop. */
const YIELD_EVERY_BYTES = 4 << 20;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function drive(splitter: Splitter, read: BlockReader): Promise<LineBlocksEnd> {
  let sinceYield = 0;
  for (;;) {
    if (sinceYield >= YIELD_EVERY_BYTES) {
      sinceYield = 0;
      await nextTurn();
    }
    const n = splitter.fill(read);
    if (n === 0 || splitter.stopped) break;
    sinceYield += n;
  }
  return splitter.end();
}
