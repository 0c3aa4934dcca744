/**
 * ChatRecord validation for the read and write paths.
 *
 * Validating 100k+ records with zod dominates load time, so a hand-written
 * structural check runs first. It is deliberately one-sided: it returns true
 * only for values that ChatRecordSchema certainly accepts (every check here is
 * at least as strict as the schema's), and anything it is unsure about falls
 * through to zod, which then decides and explains. So both paths accept exactly
 * the same set of values. test/session/record-validation.test.ts checks the
 * implication with generated inputs; keep this file in step with records.ts.
 *
 * On success the caller keeps the input value itself, not zod's output: the
 * schemas have no defaults or transforms and loose objects keep unknown keys,
 * so zod's output is a value-equal copy that only differs in key order. Keeping
 * the input preserves the file's key order and makes both paths return the
 * same object.
 */
import type { z } from 'zod';
import { ChatRecordSchema, type ChatRecord } from './records.js';

export type RecordCheck = { ok: true; record: ChatRecord } | { ok: false; reason: string };

export function validateChatRecord(value: unknown): RecordCheck {
  if (isCertainlyValidRecord(value)) return { ok: true, record: value };
  const parsed = ChatRecordSchema.safeParse(value);
  if (parsed.success) return { ok: true, record: value as ChatRecord };
  return { ok: false, reason: summarizeIssues(parsed.error) };
}

/** A short, readable summary of the first few zod issues, e.g. `message.parts.0.text: expected string`. */
export function summarizeIssues(error: z.ZodError, max = 3): string {
  const shown = error.issues.slice(0, max).map((issue) => {
    const where = issue.path.length === 0 ? '(record)' : issue.path.map(String).join('.');
    return `${where}: ${issue.message.replace(/^Invalid input: /, '')}`;
  });
  const more = error.issues.length > max ? ` (+${error.issues.length - max} more)` : '';
  return shown.join('; ') + more;
}

// ---- the fast path: true only when ChatRecordSchema would accept the value ----------------

type Obj = Record<string, unknown>;

/** zod's object check: a non-null, non-array object. Plain prototype also satisfies z.record. */
function isPlainObject(v: unknown): v is Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

function optString(v: unknown): boolean {
  return v === undefined || typeof v === 'string';
}

function nonEmptyString(v: unknown): boolean {
  return typeof v === 'string' && v.length > 0;
}

function optRecord(v: unknown): boolean {
  return v === undefined || isPlainObject(v);
}

function isPart(v: unknown): boolean {
  if (!isPlainObject(v)) return false;
  if (!optString(v.text)) return false;
  if (v.thought !== undefined && typeof v.thought !== 'boolean') return false;
  const call = v.functionCall;
  if (call !== undefined) {
    if (!isPlainObject(call) || typeof call.name !== 'string' || !optString(call.id) || !optRecord(call.args)) {
      return false;
    }
  }
  const response = v.functionResponse;
  if (response !== undefined) {
    if (!isPlainObject(response) || typeof response.name !== 'string' || !optString(response.id) || !isPlainObject(response.response)) {
      return false;
    }
  }
  return true;
}

function isMessage(v: unknown, role: 'user' | 'model'): boolean {
  if (!isPlainObject(v) || v.role !== role) return false;
  const parts = v.parts;
  if (!Array.isArray(parts)) return false;
  for (let i = 0; i < parts.length; i++) if (!isPart(parts[i])) return false;
  return true;
}

function hasBaseFields(v: Obj): boolean {
  return (
    nonEmptyString(v.uuid) &&
    (v.parentUuid === null || nonEmptyString(v.parentUuid)) &&
    nonEmptyString(v.sessionId) &&
    typeof v.timestamp === 'string' &&
    optString(v.provenance) &&
    optString(v.cwd) &&
    optString(v.version) &&
    optString(v.gitBranch) &&
    optString(v.subtype)
  );
}

export function isCertainlyValidRecord(v: unknown): v is ChatRecord {
  if (!isPlainObject(v) || !hasBaseFields(v)) return false;
  switch (v.type) {
    case 'user': {
      const sp = v.systemPayload;
      if (sp !== undefined && !(isPlainObject(sp) && optString(sp.displayText))) return false;
      return isMessage(v.message, 'user');
    }
    case 'assistant':
      return optString(v.model) && optRecord(v.usageMetadata) && isMessage(v.message, 'model');
    case 'tool_result': {
      const tcr = v.toolCallResult;
      if (tcr !== undefined && !(isPlainObject(tcr) && typeof tcr.callId === 'string' && typeof tcr.status === 'string' && optString(tcr.errorType))) {
        return false;
      }
      const rec = v.recovery;
      if (rec !== undefined && !(isPlainObject(rec) && typeof rec.planId === 'string' && rec.synthetic === true)) {
        return false;
      }
      return isMessage(v.message, 'user');
    }
    case 'system':
      return typeof v.subtype === 'string';
    default:
      return false;
  }
}
