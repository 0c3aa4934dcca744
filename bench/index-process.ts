/**
 * The index pass in a whole process: `node dist/bench/index-process.js FILE` runs
 * readSessionIndex (every line parsed and checked, only the index kept) and exits.
 * Spawn -> exit against the floor process shows what an index-based resume would
 * cost before its tail is parsed (issue 11's "index, not objects").
 */
import { readSessionIndex } from '../src/session/outline-reader.js';

const path = process.argv[2];
if (!path) throw new Error('usage: index-process.js FILE');
const index = await readSessionIndex(path);
process.stdout.write(`${JSON.stringify({ entries: index.entries.length, diagnostics: index.diagnostics.length, maxRssKb: process.resourceUsage().maxRSS })}\n`);
