/**
 * The floor of a whole process: `node dist/bench/floor-process.js FILE`
 * streams FILE in 64 KiB blocks and JSON.parses every line, keeping nothing, then
 * prints one line and exits. It imports nothing of mend, so spawn -> exit is node's
 * own start-up plus the least any loader must do with the file: a resume that reaches
 * its recovery line within a small factor of this costs little beyond parsing.
 */
import { openSync, readSync, closeSync } from 'node:fs';

const path = process.argv[2];
if (!path) throw new Error('usage: floor-process.js FILE');
const fd = openSync(path, 'r');
// One reused buffer: the unfinished line after a block's last '\n' moves to its front
// (bytes, so a UTF-8 sequence cut by the read is never decoded in halves).
const BLOCK = 1 << 16;
let block = Buffer.allocUnsafe(2 * BLOCK);
let held = 0;
let lines = 0;
for (;;) {
  // Room for a whole 64 KiB read after the held bytes; grows only for lines longer than that.
  if (block.length - held < BLOCK) block = Buffer.concat([block.subarray(0, held), Buffer.allocUnsafe(block.length)]);
  const n = readSync(fd, block, held, BLOCK, null);
  if (n === 0) break;
  const end = held + n;
  const last = block.lastIndexOf(0x0a, end - 1);
  if (last === -1) {
    held = end;
    continue;
  }
  const text = block.toString('utf8', 0, last + 1);
  block.copy(block, 0, last + 1, end);
  held = end - last - 1;
  let start = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
    if (nl > start) JSON.parse(text.slice(start, nl));
    lines++;
    start = nl + 1;
  }
}
closeSync(fd);
if (held > 0) (JSON.parse(block.toString('utf8', 0, held)), lines++);
process.stdout.write(`${JSON.stringify({ lines, maxRssKb: process.resourceUsage().maxRSS })}\n`);
