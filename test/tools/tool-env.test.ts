import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { shellTool } from '../../src/tools/shell-tool.js';
import { defineTool } from '../../src/tools/tool.js';
import { toolSessionContext } from '../../src/tools/tool-context.js';
import { parseToolEnvPolicy, redactSecretValues, secretValues, toolEnvironment } from '../../src/tools/tool-env.js';
import { context } from './helpers.js';

const parent = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/u',
  LANG: 'C.UTF-8',
  OPENAI_API_KEY: 'sk-live-abcdefgh12345678',
  MEND_API_KEY_FILE: '/run/keyfile',
  GITHUB_TOKEN: 'ghp_tokentokentoken',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-value-123',
  client_secret: 'lowercase-secret-1',
  DB_PASSWORD_FILE: '/run/pw',
  EDITOR: 'vim',
  UNSET: undefined,
};

describe('toolEnvironment', () => {
  it('scrub (the default) drops credentials and secret-named variables, case-insensitively', () => {
    expect(toolEnvironment(parent, 'scrub', ['MEND_API_KEY_FILE'])).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/u', LANG: 'C.UTF-8', EDITOR: 'vim' });
  });

  it('inherit drops only the credentials', () => {
    const env = toolEnvironment(parent, 'inherit', ['OPENAI_API_KEY']);
    expect(env).not.toHaveProperty('OPENAI_API_KEY');
    expect(env).toMatchObject({ GITHUB_TOKEN: 'ghp_tokentokentoken', EDITOR: 'vim', DB_PASSWORD_FILE: '/run/pw' });
    expect(env).not.toHaveProperty('UNSET');
  });

  it('allow passes the listed variables and the basics, never a credential', () => {
    const env = toolEnvironment(parent, { allow: ['EDITOR', 'GITHUB_TOKEN', 'OPENAI_API_KEY', 'MISSING'] }, ['OPENAI_API_KEY']);
    expect(env).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/u', LANG: 'C.UTF-8', EDITOR: 'vim', GITHUB_TOKEN: 'ghp_tokentokentoken' });
  });

  it('does not modify the parent environment', () => {
    const copy = { ...parent };
    toolEnvironment(parent, 'scrub', ['OPENAI_API_KEY']);
    expect(parent).toEqual(copy);
  });

  it('parses the CLI syntax, errors as values', () => {
    expect(parseToolEnvPolicy('scrub')).toEqual({ ok: true, policy: 'scrub' });
    expect(parseToolEnvPolicy('inherit')).toEqual({ ok: true, policy: 'inherit' });
    expect(parseToolEnvPolicy('allow:A, B_2,')).toEqual({ ok: true, policy: { allow: ['A', 'B_2'] } });
    expect(parseToolEnvPolicy('allow:A-B')).toMatchObject({ ok: false });
    expect(parseToolEnvPolicy('everything')).toMatchObject({ ok: false, error: expect.stringContaining('--tool-env') });
  });
});

describe('secret redaction', () => {
  it('collects the values of credentials and secret-named variables of 8 or more characters', () => {
    expect(secretValues({ ...parent, SHORT_TOKEN: 'abc' }, ['MEND_API_KEY_FILE']).sort()).toEqual(
      ['/run/keyfile', 'aws-secret-value-123', 'ghp_tokentokentoken', 'lowercase-secret-1', 'sk-live-abcdefgh12345678'].sort(),
    );
  });

  it('redacts every occurrence, longest first, and leaves short values alone', () => {
    expect(redactSecretValues('a sk-live-abcdefgh12345678 b sk-live-abcdefgh12345678 short', ['sk-live-abcdefgh', 'sk-live-abcdefgh12345678', 'short'])).toBe(
      'a [redacted] b [redacted] short',
    );
  });

  it('is applied by defineTool to output and display of every outcome, errors included', async () => {
    const secret = 'hunter2hunter2';
    const tool = defineTool({
      name: 'leaky',
      description: 'prints a secret',
      kind: 'read',
      argsSchema: z.object({ fail: z.boolean() }),
      run: async ({ fail }) => {
        if (fail) throw new Error(`cannot use ${secret}`);
        return { output: `value=${secret}`, display: secret, isError: false };
      },
    });
    expect(await tool.execute({ fail: false }, context('/', { secrets: [secret] }))).toEqual({
      output: 'value=[redacted]',
      display: '[redacted]',
      isError: false,
    });
    expect((await tool.execute({ fail: true }, context('/', { secrets: [secret] }))).output).toBe('leaky failed: cannot use [redacted]');
  });
});

describe('run_shell_command environment', () => {
  it('runs with exactly ctx.env and redacts secret values from what it prints', async () => {
    const env = toolEnvironment({ ...process.env, OPENAI_API_KEY: 'sk-should-not-leak-1', MEND_VISIBLE: 'yes' }, 'scrub', ['OPENAI_API_KEY']);
    const outcome = await shellTool.execute(
      { command: 'echo "key=${OPENAI_API_KEY:-unset} visible=$MEND_VISIBLE"; echo "cat=leaked-by-file-1234"' },
      context('/', { env, secrets: ['sk-should-not-leak-1', 'leaked-by-file-1234'] }),
    );
    expect(outcome.output).toContain('key=unset visible=yes');
    expect(outcome.output).toContain('cat=[redacted]');
    expect(outcome.display).not.toContain('leaked-by-file-1234');
  });

  it('scrubs secret-named variables by default when no env is given', async () => {
    process.env.MEND_TEST_FAKE_TOKEN = 'fake-token-value-42';
    try {
      const outcome = await shellTool.execute({ command: 'echo "t=${MEND_TEST_FAKE_TOKEN:-unset}"' }, context('/'));
      expect(outcome.output).toContain('t=unset');
    } finally {
      delete process.env.MEND_TEST_FAKE_TOKEN;
    }
  });
});

describe('toolSessionContext', () => {
  it('combines the project root, added directories, environment and secrets for every tool call', () => {
    const session = toolSessionContext({
      projectRoot: '/p',
      addDirs: ['../lib'],
      policy: 'scrub',
      parentEnv: parent,
      credentialNames: ['OPENAI_API_KEY'],
      extraSecrets: ['from-a-flag-123456'],
    });
    expect(session.projectRoot).toBe('/p');
    expect(session.roots).toEqual(['../lib']);
    expect(session.env).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/u', LANG: 'C.UTF-8', EDITOR: 'vim', MEND_API_KEY_FILE: '/run/keyfile' });
    expect(session.secrets).toContain('sk-live-abcdefgh12345678');
    expect(session.secrets).toContain('from-a-flag-123456');
  });
});
