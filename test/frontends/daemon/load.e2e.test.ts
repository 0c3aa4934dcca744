/**
 * Load: 50 sessions at once on one built daemon, each in its own project folder
 * and running two turns (a shell tool that reads a file only that folder holds,
 * then a plain answer) against the scripted model, driven by the real Qwen
 * `DaemonClient`. No event of one session may carry another's data, and every
 * turn ends with exactly one terminal event. Prints the figures that
 * docs/performance.md quotes.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonClient, DaemonSessionClient } from '@qwen-code/sdk/daemon';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, makeSandbox, writeScript } from '../../support/cli.js';
import { startDaemon, stopAllDaemons } from './helpers.js';

const SESSIONS = Number(process.env['MEND_LOAD_SESSIONS'] ?? 50);
const TURNS = 2;

type Event = { id?: number; type: string; data: Record<string, unknown>; promptId?: string };

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

describe('mend serve under load', { timeout: 120_000 }, () => {
  it(`${SESSIONS} sessions at once, ${TURNS} turns each: no cross-talk, one terminal event per turn`, async () => {
    const sb = makeSandbox('daemon-load');
    const script = writeScript(sb, [
      { text: 'Reading the marker.', toolCalls: [{ id: 'call_cat', name: 'run_shell_command', args: { command: 'cat marker.txt' } }] },
      { text: 'Read it.' },
      { text: 'Second turn done.' },
    ]);
    const daemon = await startDaemon(sb, { args: ['--scripted-responses', script, '--approval-mode', 'yolo'] });
    const client = new DaemonClient({ baseUrl: daemon.url });
    const rssBefore = rssKiB(daemon.pid);
    /** Per turn index: prompt accepted -> its terminal event, in ms. */
    const latencies: number[][] = Array.from({ length: TURNS }, () => []);

    const runSession = async (i: number) => {
      const cwd = join(sb.cwd, `s${i}`);
      const marker = `marker-${i}-${randomUUID()}`;
      mkdirSync(cwd);
      writeFileSync(join(cwd, 'marker.txt'), `${marker}\n`);
      const session = await DaemonSessionClient.createOrAttach(client, { workspaceCwd: cwd, sessionId: randomUUID() });
      const events: Event[] = [];
      const terminals = new Map<string, number>();
      const waiter: { wake?: () => void } = {};
      const reading = (async () => {
        for await (const e of session.subscribeEvents({ lastEventId: 0 }) as AsyncIterable<Event>) {
          events.push(e);
          if (e.type === 'turn_complete' || e.type === 'turn_error') {
            const promptId = String(e.data['promptId']);
            terminals.set(promptId, (terminals.get(promptId) ?? 0) + 1);
            waiter.wake?.();
          }
        }
      })();
      const prompts: string[] = [];
      for (let turn = 0; turn < TURNS; turn++) {
        const started = performance.now();
        const { promptId } = await session.submitPrompt({ prompt: [{ type: 'text', text: `session ${i} turn ${turn}` }] });
        prompts.push(promptId);
        while (!terminals.has(promptId)) await new Promise<void>((resolve) => (waiter.wake = resolve));
        latencies[turn]!.push(performance.now() - started);
      }
      // Closing ends the stream (after session_closed): a second terminal event of any turn would be seen.
      await session.close();
      await reading;
      return { i, marker, sessionId: session.sessionId, events, terminals, prompts };
    };

    const started = performance.now();
    const results = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => runSession(i)));
    const wallMs = performance.now() - started;
    const rssAfter = rssKiB(daemon.pid);

    const markers = results.map((r) => r.marker);
    for (const r of results) {
      // Every event is this session's, and no other session's marker or prompt text appears in it.
      for (const e of r.events) {
        if (e.data['sessionId'] !== undefined) expect(e.data['sessionId']).toBe(r.sessionId);
        const text = JSON.stringify(e);
        for (const [j, m] of markers.entries()) if (j !== r.i) expect(text).not.toContain(m);
        expect(text).not.toMatch(new RegExp(`session (?!${r.i} )\\d+ turn`));
      }
      expect(JSON.stringify(r.events)).toContain(r.marker);
      // Exactly one terminal event per prompt, each a success.
      expect([...r.terminals.entries()]).toEqual(r.prompts.map((p) => [p, 1]));
      const terminal = r.events.filter((e) => e.type === 'turn_complete' || e.type === 'turn_error');
      expect(terminal.map((e) => e.data['stopReason'])).toEqual(['end_turn', 'end_turn']);
      expect(r.events.at(-1)).toMatchObject({ type: 'session_closed', data: { reason: 'client_close' } });
      const ids = r.events.flatMap((e) => (e.id === undefined ? [] : [e.id]));
      expect(ids).toEqual(ids.map((_, k) => k + 1));
    }
    const stopped = await daemon.stop();
    expect(stopped.exitCode).toBe(0);

    const summary = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return { p50: Math.round(percentile(sorted, 50)), p95: Math.round(percentile(sorted, 95)), max: Math.round(sorted.at(-1)!) };
    };
    const events = results.reduce((n, r) => n + r.events.length, 0);
    const figures = {
      sessions: SESSIONS,
      turns: SESSIONS * TURNS,
      events,
      wallMs: Math.round(wallMs),
      turnsPerSecond: Math.round((SESSIONS * TURNS) / (wallMs / 1000)),
      /** Turn 1 runs a shell tool between two model calls; turn 2 is one model call. */
      turnLatencyMs: latencies.map(summary),
      rssMiB: { idle: Math.round(rssBefore / 1024), after: Math.round(rssAfter / 1024) },
    };
    process.stdout.write(`daemon load figures: ${JSON.stringify(figures)}\n`);
    expect(latencies.flat()).toHaveLength(SESSIONS * TURNS);
  });
});
