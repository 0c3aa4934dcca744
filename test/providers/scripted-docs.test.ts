/** docs/scripted-responses.md against the schema it documents: the example parses, every field is in the table. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptSchema, ScriptedResponseSchema, ScriptedToolCallSchema } from '../../src/providers/scripted-provider.js';
import { REPO_ROOT } from '../support/cli.js';

const DOC = readFileSync(join(REPO_ROOT, 'docs/scripted-responses.md'), 'utf8');

describe('docs/scripted-responses.md', () => {
  it('its example is a valid script', () => {
    const block = /```json\n([\s\S]*?)```/.exec(DOC)?.[1];
    expect(block).toBeDefined();
    const parsed = ScriptSchema.safeParse(JSON.parse(block!));
    expect(parsed.success).toBe(true);
    expect(parsed.data).toHaveLength(2);
  });

  it('names every field of a response and of a tool call', () => {
    for (const field of Object.keys(ScriptedResponseSchema.shape)) expect(DOC).toContain(`| \`${field}\` |`);
    for (const field of Object.keys(ScriptedToolCallSchema.shape)) expect(DOC).toMatch(new RegExp(`\\{[^}]*\\b${field}\\b`));
  });
});
