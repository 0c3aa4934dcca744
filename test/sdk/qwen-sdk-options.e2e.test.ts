/**
 * Qwen Code's own SDK (`@qwen-code/sdk` 0.1.14, the real client) driving mend with each of
 * the options that used to make mend exit 2 (item 13): every one is accepted and
 * mapped where it means something here, or refused with a readable error result.
 */
import { join, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { query, type QueryOptions } from '@qwen-code/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, makeSandbox, readLog, sessionFiles, writeScript } from '../support/cli.js';
import { startOpenAIServer, textReply } from '../support/openai-server.js';

afterAll(cleanupSandboxes);

const BIN = resolve(import.meta.dirname, '../../bin/mend.js');

async function run(options: Partial<QueryOptions>, script: string[] = []): Promise<{ messages: Array<Record<string, any>>; error: unknown }> {
  const sb = makeSandbox('qwen-sdk');
  const scriptPath = writeScript(sb, [{ text: 'answered' }]);
  const q = query({
    prompt: 'hello',
    options: {
      cwd: sb.cwd,
      pathToQwenExecutable: BIN,
      env: { MEND_HOME: sb.home, PATH: process.env['PATH'] ?? '' },
      extraArgs: ['--scripted-responses', scriptPath, ...script],
      ...options,
    } as QueryOptions,
  });
  const messages: Array<Record<string, any>> = [];
  let error: unknown;
  try {
    for await (const m of q) messages.push(m as unknown as Record<string, any>);
  } catch (e) {
    error = e;
  }
  return { messages, error };
}

describe("Qwen Code's SDK options", { timeout: 60_000 }, () => {
  it('maxSessionTurns, excludeTools, coreTools, authType and includeDirectories are accepted', async () => {
    const extra = makeSandbox('qwen-extra').scratch;
    mkdirSync(join(extra, 'more'), { recursive: true });
    const { messages, error } = await run({
      maxSessionTurns: 3,
      excludeTools: ['run_shell_command'],
      coreTools: ['read_file', 'list_directory', 'run_shell_command'],
      authType: 'openai',
      includeDirectories: [join(extra, 'more')],
    } as Partial<QueryOptions>);
    expect(error).toBeUndefined();
    const init = messages.find((m) => m['type'] === 'system' && m['subtype'] === 'init')!;
    expect(init['tools']).toEqual(['read_file', 'list_directory']);
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'answered' });
  });

  it('systemPrompt replaces the built-in one (the model server sees it)', async () => {
    const server = await startOpenAIServer();
    try {
      server.enqueue(textReply('terse answer'));
      const sb = makeSandbox('qwen-system');
      const q = query({
        prompt: 'hello',
        options: {
          cwd: sb.cwd,
          pathToQwenExecutable: BIN,
          model: 'test-model',
          systemPrompt: 'You are terse.',
          env: {
            MEND_HOME: sb.home,
            PATH: process.env['PATH'] ?? '',
            OPENAI_API_KEY: 'sk-test',
            OPENAI_BASE_URL: server.baseURL,
            MEND_OPENAI_MAX_RETRIES: '0',
          },
        } as QueryOptions,
      });
      const messages: Array<Record<string, unknown>> = [];
      for await (const m of q) messages.push(m as unknown as Record<string, unknown>);
      expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'terse answer' });
      expect(server.requests[0]!.body.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
      expect(readLog(sessionFiles(sb)[0]!).map((r) => r.type)).toEqual(['user', 'assistant']);
    } finally {
      await server.close();
    }
  });

  it("permissionMode 'auto' is refused with a readable error result", async () => {
    const { messages, error } = await run({ permissionMode: 'auto' } as Partial<QueryOptions>);
    const result = messages.find((m) => m['type'] === 'result');
    expect(result).toMatchObject({ is_error: true, error: { code: 'usage', message: expect.stringContaining('not supported') } });
    expect(String((error as Error | undefined)?.message ?? '')).toMatch(/code 2/);
  });
});
