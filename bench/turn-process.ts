/**
 * Turns on a long session with plan checkpoints on or off, in a fresh process:
 *
 *   node dist/bench/turn-process.js FILE on|off TURNS HOME
 *
 * Opens FILE (a session log, appended to: give it a copy) the way a run that writes
 * does, with a scripted model that streams its answer in chunks (about 40 ms, a fast
 * model), and runs TURNS turns. With `on`, the log has a checkpoint before the first
 * turn (a read made it) and the runtime refreshes it after every turn, off the turn's
 * path. Prints one JSON line: each turn's wall time (prompt to outcome).
 */
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ModelProvider } from '../src/providers/provider.js';
import { settledCheckpointWrites } from '../src/runtime/checkpoint/plan-checkpoints.js';
import { loadPlanHead } from '../src/runtime/load-and-plan.js';
import { SessionRuntime, type RuntimeDeps } from '../src/runtime/session-runtime.js';
import { JsonlSessionStore } from '../src/store/jsonl/jsonl-store.js';

const [file, mode, turnsArg, home] = process.argv.slice(2) as [string, 'on' | 'off', string, string];
const turns = Number(turnsArg);
const store = new JsonlSessionStore({ home, ...(mode === 'on' ? { checkpoints: {} } : {}) });
const cwd = dirname(file);
const scope = { projectRoot: cwd, cwd };
const ref = await store.resolve(scope, file);
if (mode === 'on') {
  await loadPlanHead(store, ref, false, null);
  await settledCheckpointWrites();
}
/** A fast model: eight text chunks 5 ms apart, whatever the history. */
const provider: ModelProvider = {
  name: 'bench',
  model: 'bench',
  async *stream() {
    for (let i = 0; i < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      yield { type: 'text_delta', text: `chunk ${i} ` };
    }
    yield { type: 'finish', stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 8 } };
  },
};
const deps: RuntimeDeps = {
  store,
  scope,
  identity: { host: 'bench', pid: process.pid },
  cwd,
  version: '0.1.0',
  newId: randomUUID,
  now: () => new Date().toISOString(),
  clock: () => performance.now(),
  provider: () => async () => provider,
};
const runtime = await SessionRuntime.open(deps, {
  target: { type: 'resume', target: file },
  access: 'write',
  settings: { model: undefined, approvalMode: 'default', allowedTools: [], maxTurns: 10, allowAutoContinue: false, acceptDegraded: true },
});
const ms: number[] = [];
for (let i = 0; i < turns; i++) {
  const t = performance.now();
  const outcome = await runtime.prompt([{ text: `question ${i}` }]);
  ms.push(performance.now() - t);
  if (outcome.status !== 'success') throw new Error(`turn ${i}: ${JSON.stringify(outcome)}`);
}
await runtime.close();
console.log(JSON.stringify({ mode, ms }));
