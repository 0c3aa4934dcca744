/**
 * The outline pass in a whole process: `node dist/bench/index-process.js FILE` runs
 * readSessionOutline (every line parsed and checked, only the outline's columns kept,
 * the session and its fragments sorted out, on one thread or two as the CLI would) and
 * exits. Spawn -> exit against the floor process shows what a resume costs before its
 * plan ("index, not objects").
 */
import { availableParallelism } from 'node:os';
import { outlineFromEnv } from '../src/cli/outline-env.js';
import { readSessionOutline } from '../src/session/outline/outline-reader.js';

const path = process.argv[2];
if (!path) throw new Error('usage: index-process.js FILE');
// One thread or two as the CLI decides on this machine (src/cli/main.ts composeStore).
const parallel = outlineFromEnv(process.env, availableParallelism());
const outline = await readSessionOutline(path, parallel === undefined ? {} : { parallel });
process.stdout.write(
  `${JSON.stringify({ entries: outline.source.count, diagnostics: outline.read.diagnostics.length, maxRssKb: process.resourceUsage().maxRSS })}\n`,
);
