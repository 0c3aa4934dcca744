/**
 * In-process runtime fixtures: a JSONL store in a temp MEND_HOME, the scripted
 * model, and RuntimeDeps wired the way src/cli/main.ts wires them (no spawn).
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedProvider, type ScriptInput } from '../../src/providers/scripted-provider.js';
import type { RuntimeDeps, RuntimeSettings } from '../../src/runtime/session-runtime.js';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import { trackTempDir } from './cli.js';
import { CORPUS_DIR } from './corpus.js';

export interface RuntimeFixture {
  deps: RuntimeDeps;
  home: string;
  cwd: string;
  chats: string;
  /** Copies a corpus case into this project's chats folder under its own session id; returns the id. */
  install(caseName: string, sessionId: string): string;
}

export function runtimeFixture(script: ScriptInput, extra: Partial<RuntimeDeps> = {}): RuntimeFixture {
  const root = trackTempDir(realpathSync(mkdtempSync(join(tmpdir(), 'mend-runtime-'))));
  const home = join(root, 'home');
  const cwd = join(root, 'project');
  mkdirSync(cwd);
  const chats = join(home, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
  const store = new JsonlSessionStore({ home });
  const provider = new ScriptedProvider(script);
  const deps: RuntimeDeps = {
    store,
    scope: { projectRoot: cwd, cwd },
    identity: { host: 'test-host', pid: process.pid },
    cwd,
    version: '0.1.0',
    newId: randomUUID,
    now: () => new Date().toISOString(),
    clock: () => performance.now(),
    provider: () => async () => provider,
    ...extra,
  };
  return {
    deps,
    home,
    cwd,
    chats,
    install(caseName, sessionId) {
      mkdirSync(chats, { recursive: true });
      copyFileSync(join(CORPUS_DIR, caseName, 'session.jsonl'), join(chats, `${sessionId}.jsonl`));
      return sessionId;
    },
  };
}

export const defaultSettings: RuntimeSettings = {
  model: undefined,
  approvalMode: 'default',
  allowedTools: [],
  maxTurns: 10,
  allowAutoContinue: false,
  acceptDegraded: false,
};
