/**
 * The control protocol over an in-memory channel pair, in process: the server
 * reads its requests from the pair and writes every message to it, nothing
 * through the process's stdio. A host talks to it line by line and waits for
 * each answer, as over stdio or a socket.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createOutputSink } from '../../../src/frontends/shared/output-sink.js';
import type { StdioRunOptions } from '../../../src/frontends/shared/run-options.js';
import { memoryChannelPair } from '../../../src/frontends/stream-json/control-channel.js';
import { StreamJsonServer } from '../../../src/frontends/stream-json/stream-json-server.js';
import { SessionRuntime } from '../../../src/runtime/session-runtime.js';
import { LineFramer } from '../../../src/wire/line-framer.js';
import { cleanupSandboxes } from '../../support/cli.js';
import { defaultSettings, runtimeFixture } from '../../support/runtime.js';

afterAll(cleanupSandboxes);

const DANGLING = '38dff1b0-3406-4c0b-a5f4-8df5d96853fc';

const OPTIONS: StdioRunOptions = {
  prompt: undefined,
  promptFromStdin: false,
  continue: false,
  resume: DANGLING,
  sessionId: undefined,
  forkSession: false,
  outputFormat: 'stream-json',
  inputFormat: 'stream-json',
  includePartialMessages: false,
  continueInterrupted: false,
  planId: undefined,
  autoContinue: false,
  acceptDegraded: false,
  approvalMode: 'default',
  allowedTools: [],
  maxTurns: 10,
  model: undefined,
  debug: false,
  verbose: false,
  ignoredFlags: [],
  permissionTimeoutMs: 0,
  systemPrompt: undefined,
  appendSystemPrompt: undefined,
  coreTools: undefined,
  excludeTools: [],
};

describe('StreamJsonServer over an in-memory channel', { timeout: 30_000 }, () => {
  it('answers control requests and runs turns over the pair; ends when the input ends', async () => {
    const fixture = runtimeFixture([{}, {}, { text: 'Checked.' }, { text: 'Again.' }]);
    fixture.install('dangling-single-call', DANGLING);
    const runtime = await SessionRuntime.open(fixture.deps, { target: { type: 'resume', target: DANGLING }, access: 'write', settings: defaultSettings });
    const { server: channel, client } = memoryChannelPair();
    const stderr: string[] = [];
    const out = createOutputSink('stream-json', channel.output, { write: (t: string) => stderr.push(t) } as never, false);
    const signal = new AbortController().signal;
    const server = new StreamJsonServer(OPTIONS, { runtime: fixture.deps, modelName: () => 'scripted', signal }, channel, out, runtime);
    const serving = server.serve();

    const received: Array<Record<string, unknown>> = [];
    const framer = new LineFramer();
    const waiters: Array<() => void> = [];
    client.input.on('data', (chunk: Buffer) => {
      for (const line of framer.push(chunk)) if (line.ok) received.push(line.value as Record<string, unknown>);
      for (const wake of waiters.splice(0)) wake();
    });
    const next = async (pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
      for (;;) {
        const found = received.find(pred);
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    const send = (message: unknown) => client.output.write(`${JSON.stringify(message)}\n`);
    const answerTo = (id: string) => next((m) => m['type'] === 'control_response' && (m['response'] as { request_id: string }).request_id === id);

    send({ type: 'control_request', request_id: 'i1', request: { subtype: 'initialize' } });
    const init = (await answerTo('i1'))['response'] as { response: { recovery: Record<string, unknown> } };
    expect(init.response.recovery).toMatchObject({ kind: 'interrupted_turn', cause: 'crash', can_continue: true });

    send({ type: 'control_request', request_id: 'c1', request: { subtype: 'continue_last_turn', plan_id: init.response.recovery['plan_id'] } });
    expect(((await answerTo('c1'))['response'] as { response: unknown }).response).toMatchObject({ accepted: true, kind: 'interrupted_turn' });
    await next((m) => m['type'] === 'result');

    send({ type: 'user', message: { role: 'user', content: 'and now?' } });
    await next((m) => m['type'] === 'result' && m['result'] === 'Again.');

    client.output.end();
    expect(await serving).toBe(0);
    const results = received.filter((m) => m['type'] === 'result');
    expect(results.map((r) => [r['subtype'], r['result']])).toEqual([
      ['success', 'Checked.'],
      ['success', 'Again.'],
    ]);
    expect(stderr).toEqual([]);
  });
});
