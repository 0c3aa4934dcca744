/** ProcessTransport against a fake CLI process: spawning, framing, validation, exits, shutdown. */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  defaultExecutable,
  MendProcessError,
  optionsToArgs,
  ProcessTransport,
  validationIssues,
  type InboundMessage,
  type Options,
} from '../../src/sdk/index.js';

const FAKE = resolve(import.meta.dirname, 'fake-cli.mjs');

function transport(scenario: string, options: Options = {}, limits = {}): ProcessTransport {
  return new ProcessTransport({ pathToExecutable: FAKE, ...options, env: { FAKE_CLI: scenario, ...options.env } }, limits);
}

async function readAll(t: ProcessTransport): Promise<{ messages: InboundMessage[]; error: unknown }> {
  const messages: InboundMessage[] = [];
  try {
    for await (const m of t.readMessages()) messages.push(m);
    return { messages, error: undefined };
  } catch (error) {
    return { messages, error };
  }
}

async function first(t: ProcessTransport, type: string): Promise<InboundMessage> {
  for await (const m of t.readMessages()) if (m.type === type) return m;
  throw new Error(`no ${type}`);
}

describe('ProcessTransport', () => {
  it('spawns with the stream-json flags, cwd and merged env; frames, validates and passes through', async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'mend-sdk-cwd-')));
    process.env['FAKE_GONE'] = 'present';
    try {
      const t = transport('framing', { cwd, model: 'm1', env: { FAKE_FOO: 'bar', FAKE_GONE: undefined } }, { maxLineBytes: 1024 });
      await t.start();
      const { messages, error } = await readAll(t);
      expect(error).toBeUndefined();
      expect(messages[0]).toEqual({
        type: 'argv',
        argv: ['--input-format', 'stream-json', '--output-format', 'stream-json', '--model=m1'],
        cwd,
        foo: 'bar',
        gone: null,
      });
      expect(messages.slice(1)).toEqual([
        { type: 'system', subtype: 'future', uuid: 'u', session_id: 's' },
        { type: 'future_thing', x: 1 },
        { type: 'assistant', uuid: 'u' },
        { type: 'last', unterminated: true },
      ]);
      expect(validationIssues(messages[1]!)).toBeUndefined();
      expect(validationIssues(messages[2]!)).toBeUndefined();
      expect(validationIssues(messages[3]!)).toBeTypeOf('string');
      // Non-JSON and non-object lines are skipped and remembered.
      expect(t.protocolErrors).toHaveLength(2);
      expect(t.protocolErrors.join('\n')).toMatch(/not JSON[\s\S]*"type"/);
      await expect(t.exited).resolves.toEqual({ exitCode: 0, signal: null, closedByHost: false });
    } finally {
      delete process.env['FAKE_GONE'];
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('a line over the cap is a typed error, never silence (a lost result or tool call would hang the host)', async () => {
    const t = transport('overlong', {}, { maxLineBytes: 1024 });
    await t.start();
    const { messages, error } = await readAll(t);
    expect(messages).toEqual([{ type: 'first' }]);
    expect(error).toMatchObject({ code: 'line_too_long' });
  });

  it('turns a non-zero exit into MendProcessError with a bounded stderr tail', async () => {
    const chunks: string[] = [];
    const t = transport('fail', { stderr: (d) => chunks.push(d) });
    await t.start();
    const { error } = await readAll(t);
    expect(error).toBeInstanceOf(MendProcessError);
    const e = error as MendProcessError;
    expect(e.exitCode).toBe(3);
    expect(e.signal).toBeNull();
    expect(e.message).toContain('exited with code 3: fatal: boom');
    expect(e.stderrTail.length).toBeLessThanOrEqual(64 * 1024);
    expect(e.stderrTail.endsWith('fatal: boom\n')).toBe(true);
    expect(chunks.join('').length).toBeGreaterThan(100 * 1024);
  });

  it('reports death by a signal it did not send', async () => {
    const t = transport('suicide');
    await t.start();
    const { messages, error } = await readAll(t);
    expect(messages.map((m) => m.type)).toEqual(['ready']);
    expect(error).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
  });

  it('writes objects as ndjson and strings raw; ending stdin ends the process normally', async () => {
    const t = transport('echo');
    await t.start();
    await t.write({ type: 'user', message: { role: 'user', content: 'a\nb' } });
    await t.write('garbage{\n');
    t.endInput();
    const { messages, error } = await readAll(t);
    expect(error).toBeUndefined();
    expect(messages).toEqual([
      {
        type: 'echo',
        raw: '{"type":"user","message":{"role":"user","content":"a\\nb"}}',
        parsed: { type: 'user', message: { role: 'user', content: 'a\nb' } },
      },
      { type: 'echo', raw: 'garbage{', parsed: null },
    ]);
    await expect(t.write({ type: 'user' })).rejects.toMatchObject({ code: 'transport_closed' });
  });

  it('close(): SIGTERM after the stdin grace; an exit it caused is normal', async () => {
    const t = transport('term', { shutdown: { stdinGraceMs: 50, killGraceMs: 5000 } });
    await t.start();
    const ready = await first(t, 'ready');
    const reading = readAll(t);
    const started = Date.now();
    await t.close();
    expect(Date.now() - started).toBeLessThan(4000);
    const { messages, error } = await reading;
    expect(error).toBeUndefined();
    expect(ready.type).toBe('ready');
    expect(messages).toEqual([]);
    await expect(t.exited).resolves.toEqual({ exitCode: 143, signal: null, closedByHost: true });
  });

  it('close(): SIGKILL when SIGTERM is ignored', async () => {
    const t = transport('stubborn', { shutdown: { stdinGraceMs: 20, killGraceMs: 300 } });
    await t.start();
    const ready = await first(t, 'ready');
    await t.close();
    await expect(t.exited).resolves.toEqual({ exitCode: null, signal: 'SIGKILL', closedByHost: true });
    expect(() => process.kill(ready['pid'] as number, 0)).toThrow();
  });

  it('reports a CLI that cannot be started', async () => {
    const t = new ProcessTransport({ pathToExecutable: '/nonexistent/mend-cli' });
    const error = await t.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MendProcessError);
    expect((error as MendProcessError).exitCode).toBeNull();
    expect(error).toMatchObject({ code: 'spawn_failed', message: expect.stringMatching(/could not be started: .*ENOENT/) });
  });
});

describe('options', () => {
  it('maps every option to its flag', () => {
    expect(
      optionsToArgs({
        resume: 'abc.jsonl',
        forkSession: true,
        model: 'm',
        provider: 'scripted',
        baseUrl: 'http://x',
        scriptedResponses: '/s.json',
        approvalMode: 'auto-edit',
        allowedTools: ['read_file', 'edit'],
        addDirs: ['/a', 'b'],
        systemPrompt: 'Be terse.',
        appendSystemPrompt: '-- end --',
        includePartialMessages: true,
        allowAutoContinue: true,
        extraArgs: ['--max-turns', '3'],
      }),
    ).toEqual([
      '--input-format',
      'stream-json',
      '--output-format',
      'stream-json',
      '--resume=abc.jsonl',
      '--fork-session',
      '--model=m',
      '--provider=scripted',
      '--base-url=http://x',
      '--scripted-responses=/s.json',
      '--approval-mode=auto-edit',
      '--allowed-tools=read_file,edit',
      '--add-dir=/a',
      '--add-dir=b',
      '--system-prompt=Be terse.',
      '--append-system-prompt=-- end --',
      '--include-partial-messages',
      '--auto-continue',
      '--max-turns',
      '3',
    ]);
    expect(optionsToArgs({ continue: true, sessionId: 'x' })).toEqual([
      '--input-format',
      'stream-json',
      '--output-format',
      'stream-json',
      '--continue',
      '--session-id=x',
    ]);
  });

  it('no option value can become a flag: every value is one --flag=value argument', () => {
    const args = optionsToArgs({ model: '--approval-mode=yolo', baseUrl: '--approval-mode=yolo' });
    expect(args.filter((a) => a.startsWith('--approval-mode'))).toEqual([]);
    expect(args).toContain('--model=--approval-mode=yolo');
  });

  it("defaults to this package's bin/mend.js", () => {
    expect(defaultExecutable()).toBe(resolve(import.meta.dirname, '../../bin/mend.js'));
    expect(defaultExecutable(resolve(import.meta.dirname, '../../dist/src/sdk'))).toBe(resolve(import.meta.dirname, '../../bin/mend.js'));
  });
});
