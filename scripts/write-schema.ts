/**
 * `npm run schema`: writes schema/stream-json.schema.json, the JSON Schema of every
 * stream-json message, generated from the zod schemas the CLI and SDK use.
 * test/wire/schema.test.ts fails when the committed file is out of date.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildStreamJsonSchema } from '../src/wire/json-schema.js';

const target = resolve(import.meta.dirname, '../../schema/stream-json.schema.json');
writeFileSync(target, `${JSON.stringify(buildStreamJsonSchema(), null, 2)}\n`);
process.stderr.write(`wrote ${target}\n`);
