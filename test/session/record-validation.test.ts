import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChatRecordSchema } from '../../src/session/records.js';
import { isCertainlyValidRecord, validateChatRecord } from '../../src/session/record-validation.js';
import { assistant, compression, system, toolResult, user } from './helpers.js';

// Each field is usually well-formed and sometimes any JSON value, and optional
// keys are sometimes absent: that mix lands on both sides of the schema.
const json = fc.jsonValue({ maxDepth: 2 });
const maybe = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 30, arbitrary: valid }, { weight: 1, arbitrary: json });
const opt = { requiredKeys: [] as never[] };
const str = fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 20, arbitrary: fc.string({ maxLength: 4 }) });
const dict = fc.dictionary(fc.string({ maxLength: 3 }), json, { maxKeys: 2 });

const part = fc.record(
  {
    text: maybe(str),
    thought: maybe(fc.boolean()),
    functionCall: maybe(fc.record({ id: maybe(str), name: maybe(str), args: maybe(dict) }, opt)),
    functionResponse: maybe(fc.record({ id: maybe(str), name: maybe(str), response: maybe(dict) }, opt)),
    extra: json,
  },
  opt,
);

const record = fc.record(
  {
    uuid: maybe(str),
    parentUuid: maybe(fc.option(str, { nil: null })),
    sessionId: maybe(str),
    timestamp: maybe(str),
    type: maybe(fc.constantFrom('user', 'assistant', 'tool_result', 'system')),
    provenance: maybe(str),
    cwd: maybe(str),
    version: maybe(str),
    gitBranch: maybe(str),
    subtype: maybe(str),
    message: maybe(fc.record({ role: maybe(fc.constantFrom('user', 'model')), parts: maybe(fc.array(part, { maxLength: 3 })) }, opt)),
    systemPayload: maybe(fc.record({ displayText: maybe(str) }, opt)),
    model: maybe(str),
    usageMetadata: maybe(dict),
    toolCallResult: maybe(fc.record({ callId: maybe(str), status: maybe(str), errorType: maybe(str), error: json }, opt)),
    recovery: maybe(fc.record({ planId: maybe(str), synthetic: maybe(fc.constant(true)) }, opt)),
  },
  { requiredKeys: ['uuid', 'parentUuid', 'sessionId', 'timestamp', 'type'] },
);

describe('record validation fast path', () => {
  it('accepts only what ChatRecordSchema accepts, and agrees with it on JSON input', () => {
    let bothValid = 0;
    let bothInvalid = 0;
    fc.assert(
      fc.property(record, (generated) => {
        const value = JSON.parse(JSON.stringify(generated)) as unknown;
        const fast = isCertainlyValidRecord(value);
        const zod = ChatRecordSchema.safeParse(value).success;
        // Soundness is what correctness rests on: fast => zod.
        if (fast) expect(zod).toBe(true);
        // For JSON input the fast path is also complete, so zod is rarely needed.
        expect(fast).toBe(zod);
        if (zod) bothValid++;
        else bothInvalid++;
      }),
      { numRuns: 3000, seed: 20250101 },
    );
    // The generator must exercise both outcomes for the property to mean anything.
    expect(bothValid).toBeGreaterThan(200);
    expect(bothInvalid).toBeGreaterThan(200);
  });

  it('takes the fast path for the records mend and Qwen write', () => {
    const records = [
      user({ uuid: 'a' }),
      assistant({ uuid: 'b', callId: 'c1' }),
      toolResult({ uuid: 'c', callId: 'c1' }),
      system({ uuid: 'd', subtype: 'ui_telemetry', payload: { x: 1 } }),
      compression({ uuid: 'e', history: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    ];
    for (const r of records) expect(isCertainlyValidRecord(JSON.parse(JSON.stringify(r)))).toBe(true);
  });

  it('returns the input object itself on both paths, so key order and identity are kept', () => {
    const plain = JSON.parse(JSON.stringify(user({ uuid: 'a' }))) as unknown;
    const fast = validateChatRecord(plain);
    expect(fast.ok && fast.record).toBe(plain);
    // A class instance is not a plain object: the fast path declines and zod decides.
    class Rec {}
    const odd = Object.assign(new Rec(), user({ uuid: 'b' }));
    expect(isCertainlyValidRecord(odd)).toBe(false);
    const slow = validateChatRecord(odd);
    expect(slow.ok && slow.record).toBe(odd);
  });

  it('summarizes zod issues with their path', () => {
    const result = validateChatRecord({ ...user({ uuid: 'a' }), uuid: '', timestamp: 5 });
    expect(result).toEqual({ ok: false, reason: 'uuid: Too small: expected string to have >=1 characters; timestamp: expected string, received number' });
  });
});
