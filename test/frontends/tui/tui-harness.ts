/**
 * Renders the terminal UI in process with ink-testing-library on a real
 * SessionRuntime and a JSONL store in a temp home: what a person would see,
 * without a terminal. The model is the scripted provider (no module mocks).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { createElement as h } from 'react';
import { App } from '../../../src/frontends/tui/components/app.js';
import { TuiController } from '../../../src/frontends/tui/tui-controller.js';
import { ScriptedProvider, type ScriptInput } from '../../../src/providers/scripted-provider.js';
import { runtimeSettingsFrom } from '../../../src/runtime/runtime-settings.js';
import type { HostOpenRequest, RuntimeDeps, SessionTarget } from '../../../src/runtime/session-runtime.js';
import type { ApprovalMode } from '../../../src/wire/approval-modes.js';
import { JsonlSessionStore } from '../../../src/store/jsonl/jsonl-store.js';
import type { SessionStore } from '../../../src/store/session-store.js';
import { ForeignSourcesStore } from '../../../src/store/foreign-sources.js';
import type { ForeignHomes } from '../../../src/foreign/homes.js';
import { trackTempDir, waitFor } from '../../support/cli.js';

export interface HarnessOptions {
  target?: SessionTarget;
  script?: ScriptInput;
  approvalMode?: ApprovalMode;
  acceptDegraded?: boolean;
  columns?: number;
  noColor?: boolean;
  /** Reuse a home and project (another process's view of the same sessions). */
  home?: string;
  cwd?: string;
  /** Other agents' homes: their session files open through the store seam (src/store/foreign-sources.ts), as the CLI composes it. */
  foreignHomes?: ForeignHomes;
  /** Another store in place of the temp home's JSONL store (a PostgreSQL database, say). */
  store?: SessionStore;
}

export function tempProject(): { home: string; cwd: string } {
  const root = trackTempDir(realpathSync(mkdtempSync(join(tmpdir(), 'mend-tui-'))));
  const cwd = join(root, 'project');
  mkdirSync(cwd);
  return { home: join(root, 'home'), cwd };
}

export function runtimeDeps(home: string, cwd: string, script: ScriptInput = [], pid = 4242): RuntimeDeps {
  const now = () => new Date().toISOString();
  return {
    store: new JsonlSessionStore({ home, now }),
    scope: { projectRoot: cwd, cwd },
    identity: { host: 'test-host', pid },
    cwd,
    version: '0.1.0',
    newId: randomUUID,
    now,
    clock: () => performance.now(),
    provider: () => async () => new ScriptedProvider(script),
  };
}

export function openRequest(o: HarnessOptions): HostOpenRequest {
  return {
    target: o.target ?? { type: 'new' },
    access: { mode: 'write_or_read_only' },
    settings: runtimeSettingsFrom({
      host: { model: undefined, approvalMode: o.approvalMode ?? 'default', allowedTools: [], maxTurns: 10 },
      session: { acceptDegraded: o.acceptDegraded ?? false },
    }),
  };
}

export interface TuiHarness {
  home: string;
  cwd: string;
  deps: RuntimeDeps;
  controller: TuiController;
  stdin: { write: (data: string) => void };
  frame: () => string;
  /** Every frame drawn so far, in order. */
  frames: () => readonly string[];
  see: (text: string | RegExp, timeoutMs?: number) => Promise<string>;
  type: (text: string, enter?: boolean) => Promise<void>;
  key: (sequence: string) => Promise<void>;
  close: () => Promise<void>;
}

export async function renderTui(o: HarnessOptions = {}): Promise<TuiHarness> {
  const project = o.home && o.cwd ? { home: o.home, cwd: o.cwd } : tempProject();
  const own = { ...runtimeDeps(project.home, project.cwd, o.script), ...(o.store ? { store: o.store } : {}) };
  // As the CLI composes it: other agents' session files open through the store seam.
  const deps: RuntimeDeps = { ...own, store: new ForeignSourcesStore(own.store, o.foreignHomes), ...(o.foreignHomes ? { foreignHomes: o.foreignHomes } : {}) };
  const controller = new TuiController({ runtime: deps, modelName: (model) => model ?? 'scripted', clearScreen: () => {} }, openRequest(o));
  const ui = render(h(App, { controller, noColor: o.noColor ?? true, ...(o.columns ? { columns: o.columns } : {}) }));
  await controller.start();
  const frame = () => ui.lastFrame() ?? '';
  return {
    ...project,
    deps,
    controller,
    stdin: ui.stdin,
    frame,
    frames: () => ui.frames,
    /** Waits until the latest frame contains the text (or matches). */
    async see(text: string | RegExp, timeoutMs = 5000): Promise<string> {
      await waitFor(
        () => (typeof text === 'string' ? frame().includes(text) : text.test(frame())),
        timeoutMs,
        `the frame to show ${String(text)}\n--- last frame:\n${frame()}`,
      );
      return frame();
    },
    /** Types text, then Enter as its own key press (as a terminal delivers it). */
    async type(text: string, enter = true): Promise<void> {
      ui.stdin.write(text);
      await tick();
      if (enter) {
        ui.stdin.write('\r');
        await tick();
      }
    },
    async key(sequence: string): Promise<void> {
      ui.stdin.write(sequence);
      await tick();
    },
    async close(): Promise<void> {
      await controller.quit();
      ui.unmount();
    },
  };
}

export const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));
