import { describe, expect, it } from 'vitest';
import { ActiveWriterSchema } from '../../src/session/active-writer.js';

describe('ActiveWriterSchema', () => {
  it('accepts a JSONL lock holder and a database lease with its epoch', () => {
    const jsonl = { store: 'jsonl', host: 'devbox', pid: 4242, since: '2026-01-01T00:00:00.000Z' };
    expect(ActiveWriterSchema.parse(jsonl)).toEqual(jsonl);
    expect(ActiveWriterSchema.parse({ ...jsonl, store: 'postgres', epoch: 3 }).epoch).toBe(3);
  });

  it('rejects a holder without a pid or with a fractional one', () => {
    expect(ActiveWriterSchema.safeParse({ store: 'jsonl', host: 'h', since: 's' }).success).toBe(false);
    expect(ActiveWriterSchema.safeParse({ store: 'jsonl', host: 'h', pid: 1.5, since: 's' }).success).toBe(false);
  });
});
