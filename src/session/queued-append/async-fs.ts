/**
 * The file calls of the queued writer, on libuv's thread pool (node:fs callbacks on
 * plain descriptors, without FileHandle objects to keep alive), as promises.
 */
import * as fs from 'node:fs';

export function writeFd(fd: number, data: Buffer, offset: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => fs.write(fd, data, offset, length, null, (error, written) => (error ? reject(error) : resolve(written))));
}

export function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

export function fstatSize(fd: number): Promise<number> {
  return new Promise((resolve, reject) => fs.fstat(fd, (error, stats) => (error ? reject(error) : resolve(stats.size))));
}

export function readAt(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => fs.read(fd, buffer, 0, buffer.length, position, (error, n) => (error ? reject(error) : resolve(n))));
}

export function ftruncateFd(fd: number, length: number): Promise<void> {
  return new Promise((resolve, reject) => fs.ftruncate(fd, length, (error) => (error ? reject(error) : resolve())));
}

export function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.close(fd, (error) => (error ? reject(error) : resolve())));
}

/** Best effort, as syncDirBestEffort: some file systems refuse fsync on a folder. */
export async function syncDirBestEffortAsync(dir: string): Promise<void> {
  let fd = -1;
  try {
    fd = await new Promise<number>((resolve, reject) =>
      fs.open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY, (error, opened) => (error ? reject(error) : resolve(opened))),
    );
    await fsyncFd(fd);
  } catch {
    // ignored, see above
  } finally {
    if (fd >= 0) await closeFd(fd).catch(() => undefined);
  }
}
