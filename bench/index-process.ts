/**
 * The outline pass in a whole process: `node dist/bench/index-process.js FILE` runs
 * readSessionOutline (every line parsed and checked, only the outline's columns kept,
 * the session and its fragments sorted out) and exits. Spawn -> exit against the floor
 * process shows what a resume costs before its plan (issue 11's "index, not objects").
 */
import { readSessionOutline } from '../src/session/outline-reader.js';

const path = process.argv[2];
if (!path) throw new Error('usage: index-process.js FILE');
const outline = await readSessionOutline(path);
process.stdout.write(
  `${JSON.stringify({ entries: outline.source.count, diagnostics: outline.read.diagnostics.length, maxRssKb: process.resourceUsage().maxRSS })}\n`,
);
