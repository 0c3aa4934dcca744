/**
 * The rule of when mend asks the host (docs/compat-claude.md) keeps Qwen Code's SDK hosts
 * asked: its command line carries `--channel=SDK` and no `--permission-prompt-tool`, and
 * it sends `initialize` whether or not its host passed canUseTool (without one it answers
 * "Denied" itself). The real `@qwen-code/sdk` query() against the built mend.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { query } from '@qwen-code/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, baseEnv, cleanupSandboxes, makeSandbox, writeScript } from '../../support/cli.js';

afterAll(cleanupSandboxes);

describe("Qwen Code's SDK", () => {
  it('is still asked through canUseTool, and its answer decides', async () => {
    const sb = makeSandbox('qwen-asks');
    const file = join(sb.cwd, 'q.txt');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: file, content: 'q' } }] }, { text: 'written' }]);
    const asked: string[] = [];
    const q = query({
      prompt: 'write it',
      options: {
        cwd: sb.cwd,
        pathToQwenExecutable: BIN,
        env: baseEnv(sb),
        extraArgs: ['--scripted-responses', script],
        canUseTool: async (name, input) => {
          asked.push(name);
          return { behavior: 'allow', updatedInput: input };
        },
      },
    });
    const types: string[] = [];
    for await (const m of q) {
      types.push(m.type);
      if (m.type === 'result') break;
    }
    await q.close();
    expect(asked).toEqual(['write_file']);
    expect(existsSync(file) && readFileSync(file, 'utf8')).toBe('q');
    expect(types.at(-1)).toBe('result');
  });
});
