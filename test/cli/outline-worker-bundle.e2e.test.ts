/**
 * The bundled outline worker (dist/cli/outline-worker.js) carries no zod: it loads the
 * record schema from its own bundle (dist/cli/outline-worker-schema.js) the first time a
 * record needs it (scripts/bundle-cli.ts). Here the worker's chunk holds a record only
 * the schema can judge, so the worker must load it, and what it finds must be what one
 * thread finds; a worker that failed would say so on stderr.
 */
import { copyFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listCorpus } from '../support/corpus.js';
import { cleanupSandboxes, makeSandbox, mend } from '../support/cli.js';

afterAll(cleanupSandboxes);

const root = join(import.meta.dirname, '..', '..');

describe('the bundled outline worker', () => {
  it('has no zod in its bundle, and loads the record schema when a record needs it', async () => {
    expect(readFileSync(join(root, 'dist', 'cli', 'outline-worker.js'), 'utf8')).not.toMatch(/\bZodError\b/);

    // The last line is a system record without a subtype: JSON the hand-written check is
    // unsure of, which the schema then rejects with its reason.
    const damaged = listCorpus().find((c) => c.name === 'damaged-lines-off-chain')!;
    const sb = makeSandbox('outline-worker-bundle');
    const path = join(sb.scratch, 'session.jsonl');
    copyFileSync(join(damaged.dir, 'session.jsonl'), path);
    const text = readFileSync(path, 'utf8');
    const lastStart = Buffer.byteLength(text.slice(0, text.trimEnd().lastIndexOf('\n') + 1));
    // Two chunks, the second (the worker's: it takes chunks from the back, and the main
    // thread waits for it to start) holding the start of the last line.
    const chunk = lastStart - 1;
    expect(Math.ceil(statSync(path).size / chunk)).toBe(2);

    const one = await mend(sb, ['plan', path, '--json'], { env: { MEND_OUTLINE_THREADS: '1' } });
    const two = await mend(sb, ['plan', path, '--json'], { env: { MEND_OUTLINE_CHUNK_BYTES: String(chunk) } });
    expect(two.stderr).toBe('');
    expect(one.stderr).toBe('');
    const diagnostics = (run: typeof one): unknown => (JSON.parse(run.stdout) as { diagnostics: unknown }).diagnostics;
    expect(diagnostics(one)).toContainEqual({ code: 'invalid_record', line: 6, reason: expect.stringContaining('subtype') });
    expect(diagnostics(two)).toEqual(diagnostics(one));
    expect(JSON.parse(two.stdout)).toEqual(JSON.parse(one.stdout));
  });
});
