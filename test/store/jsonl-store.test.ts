/**
 * The store contract suite against the embedded default, the JSONL store. A
 * JSONL log can hold any bytes, so every corpus case applies.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import { storeContract } from '../support/store-contract.js';

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

storeContract({
  name: 'jsonl',
  open: async () => {
    const home = mkdtempSync(join(tmpdir(), 'mend-store-contract-'));
    homes.push(home);
    return new JsonlSessionStore({ home });
  },
  seed: async (store, scope, sessionId, lines) => {
    const ref = await store.newSession(scope, sessionId);
    mkdirSync(dirname(ref.location), { recursive: true, mode: 0o700 });
    writeFileSync(ref.location, lines.join('\n'), { mode: 0o600 });
    return ref;
  },
});
