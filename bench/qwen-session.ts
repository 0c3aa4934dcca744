/**
 * Sessions in the format Qwen Code 0.24.4 writes (the issue-11 comparison): its
 * `version`, `gitBranch`, `ui_telemetry` system records after each model response,
 * Qwen's usageMetadata names and `toolCallResult` with a `resultDisplay`. About
 * 860 bytes a record (86 MB at 100k records), chained by parentUuid, ending in a
 * dangling call (an assistant record with two calls, one result), so a resume
 * classifies, repairs and builds a continuation like after a real crash.
 *
 * Written as plain JSON rather than through mend's RecordBuilder: these are a
 * peer's records, not mend's (no `mend/` version), which is what a user resuming
 * a Qwen session hands mend.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Material, Rng } from './generate.js';

/** Bump when the generated content changes, so cached files are regenerated. */
const QWEN_GENERATOR_VERSION = 1;

export interface QwenSession {
  label: string;
  path: string;
  bytes: number;
  records: number;
  sessionId: string;
  reused: boolean;
}

const CWD = '/home/dev/projects/webshop';
const TOOLS = ['read_file', 'run_shell_command', 'list_directory', 'edit', 'write_file'] as const;

/** `dir/<sessionId>.jsonl` (the name Qwen Code gives a session) with `records` records; reused when it exists. */
export function ensureQwenSession(dir: string, label: string, records: number, seed: number): QwenSession {
  mkdirSync(dir, { recursive: true });
  const rng = new Rng(seed);
  const text = new Material(rng);
  const sessionId = rng.uuid();
  const path = join(dir, `${sessionId}.jsonl`);
  const metaPath = join(dir, `${label}.meta.json`);
  if (existsSync(path) && existsSync(metaPath)) {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as { v: number; bytes: number; records: number };
    if (meta.v === QWEN_GENERATOR_VERSION && meta.records === records && statSync(path).size === meta.bytes) {
      return { label, path, bytes: meta.bytes, records, sessionId, reused: true };
    }
  }
  rmSync(path, { force: true });

  let clock = Date.UTC(2025, 10, 28, 9, 0, 0);
  let parent: string | null = null;
  let callNo = 0;
  let prompt = 0;
  const base = (type: string, provenance: string): Record<string, unknown> => {
    const uuid = rng.uuid();
    const record = {
      uuid,
      parentUuid: parent,
      sessionId,
      timestamp: new Date((clock += rng.int(50, 9000))).toISOString(),
      type,
      provenance,
      cwd: CWD,
      version: '0.24.4',
      gitBranch: 'main',
    };
    parent = uuid;
    return record;
  };
  const user = (): Record<string, unknown> => ({ ...base('user', 'real_user'), message: { role: 'user', parts: [{ text: text.prose(rng.int(60, 700)) }] } });
  const telemetry = (): Record<string, unknown> => ({
    ...base('system', 'system'),
    subtype: 'ui_telemetry',
    systemPayload: {
      uiEvent: {
        'event.name': 'qwen-code.api_response',
        'event.timestamp': new Date(clock).toISOString(),
        model: 'qwen3-coder-plus',
        status_code: 200,
        duration_ms: rng.int(300, 9000),
        input_token_count: rng.int(1000, 90_000),
        output_token_count: rng.int(10, 3000),
        prompt_id: `${sessionId}########${prompt}`,
      },
    },
  });
  const assistant = (calls: number): { record: Record<string, unknown>; ids: Array<{ id: string; name: string }> } => {
    const parts: unknown[] = [{ text: text.prose(rng.int(40, 500)) }];
    const ids: Array<{ id: string; name: string }> = [];
    for (let i = 0; i < calls; i++) {
      const name = rng.pick(TOOLS);
      const id = `call_${(++callNo).toString(36)}${rng.uuid().slice(0, 8)}`;
      ids.push({ id, name });
      parts.push({
        functionCall: {
          id,
          name,
          args: name === 'run_shell_command' ? { command: 'npm test', description: text.prose(30) } : { path: `src/${rng.pick(['a', 'b', 'c'])}.ts` },
        },
      });
    }
    const promptTokens = rng.int(1000, 90_000);
    const outTokens = rng.int(10, 3000);
    const record = {
      ...base('assistant', 'assistant_output'),
      model: 'qwen3-coder-plus',
      message: { role: 'model', parts },
      usageMetadata: {
        promptTokenCount: promptTokens,
        candidatesTokenCount: outTokens,
        totalTokenCount: promptTokens + outTokens,
        cachedContentTokenCount: rng.int(0, promptTokens),
      },
    };
    return { record, ids };
  };
  const result = (call: { id: string; name: string }): Record<string, unknown> => {
    const output = call.name === 'run_shell_command' ? text.shell(rng.int(80, 900)) : text.code(rng.int(80, 900));
    return {
      ...base('tool_result', 'tool_result'),
      message: { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output } } }] },
      toolCallResult: { callId: call.id, status: 'success', resultDisplay: output.slice(0, 120) },
    };
  };

  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  let bytes = 0;
  let count = 0;
  let batch = '';
  const emit = (r: Record<string, unknown>): void => {
    batch += `${JSON.stringify(r)}\n`;
    count++;
    if (batch.length > 4 << 20) flush();
  };
  const flush = (): void => {
    const buf = Buffer.from(batch, 'utf8');
    writeSync(fd, buf);
    bytes += buf.length;
    batch = '';
  };
  try {
    // Whole turns (prompt, rounds of model response + telemetry + results, final answer) until
    // the last 4 records, which are the crash: model response, telemetry, one of two results.
    while (count < records - 4) {
      prompt++;
      emit(user());
      for (let round = rng.int(1, 4); round > 0 && count < records - 8; round--) {
        const { record, ids } = assistant(rng.next() < 0.85 ? 1 : 2);
        emit(record);
        emit(telemetry());
        for (const call of ids) emit(result(call));
      }
      if (count < records - 4) emit(assistant(0).record);
    }
    while (count < records - 3) emit(count % 2 === 0 ? user() : assistant(0).record);
    const { record, ids } = assistant(2);
    emit(record);
    emit(telemetry());
    emit(result(ids[0]!));
    flush();
  } finally {
    closeSync(fd);
  }
  if (count !== records) throw new Error(`generator bug: ${count} records, wanted ${records}`);
  renameSync(tmp, path);
  writeFileSync(metaPath, `${JSON.stringify({ v: QWEN_GENERATOR_VERSION, label, bytes, records })}\n`);
  return { label, path, bytes, records, sessionId, reused: false };
}
