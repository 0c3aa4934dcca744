import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildStreamJsonSchema } from '../../src/wire/json-schema.js';

describe('schema/stream-json.schema.json', () => {
  it('is up to date with the zod schemas (run `npm run schema`)', () => {
    const committed = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../schema/stream-json.schema.json'), 'utf8')) as unknown;
    expect(committed).toEqual(JSON.parse(JSON.stringify(buildStreamJsonSchema())));
  });

  it('describes the recovery line with its snake_case fields', () => {
    const schema = buildStreamJsonSchema() as { $defs: Record<string, { required?: string[] }> };
    expect(schema.$defs['SystemRecoveryMessage']?.required).toEqual(
      expect.arrayContaining(['plan_id', 'kind', 'cause', 'can_continue', 'can_auto_continue', 'requires_user_confirmation', 'previous_attempts', 'action']),
    );
  });
});
