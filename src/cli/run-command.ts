/**
 * The default command: open (or resume) a session, print `init` and, when
 * resumed, the `recovery` line, then do what the flags ask: inspect, continue,
 * or run a prompt. Exactly one `result` ends the run.
 */
import type { Readable, Writable } from 'node:stream';
import { MendError, isMendError } from '../errors.js';
import { AgentSession, type TurnResult } from '../engine/agent-session.js';
import { toRecoverySummary } from '../engine/recovery-summary.js';
import type { Part } from '../session/records.js';
import type { ResultMessage, SystemRecoveryMessage } from '../stream/messages.js';
import type { ResultFields } from '../engine/message-builder.js';
import type { RunOptions } from './args.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { openSession, type OpenedSession, type SessionEnv } from './open-session.js';
import { createOutputSink, type OutputSink } from './output-sink.js';
import { configuredModel, lazyProvider, type ProviderEnv } from './provider-factory.js';
import { decideRecoveryAction, type Decision, type RunIntent } from './recovery-decision.js';
import { createToolPort, headlessApproval, TOOL_NAMES } from './tool-port.js';

export interface RunIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
  env: ProviderEnv;
  session: SessionEnv;
  /** Aborted with 'sigint' | 'sigterm' by the signal handlers main() installs. */
  signal: AbortSignal;
  clock: () => number;
}

export const CAPABILITIES = {
  recovery: true,
  continue_last_turn: true,
  get_recovery_plan: true,
  interrupt: true,
  can_use_tool: true,
} as const;

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Stdin is the prompt only for `-p -`, or with no prompt, no session flag, no stream-json input and a non-TTY stdin. */
export async function resolvePrompt(o: RunOptions, stdin: Readable & { isTTY?: boolean }): Promise<string | undefined> {
  if (o.prompt !== undefined) return o.prompt.trim() === '' ? undefined : o.prompt;
  const implicit =
    !o.promptFromStdin &&
    !o.continue &&
    o.resume === undefined &&
    o.sessionId === undefined &&
    o.inputFormat !== 'stream-json' &&
    stdin.isTTY !== true;
  if (!o.promptFromStdin && !implicit) return undefined;
  const text = (await readAll(stdin)).replace(/\r?\n$/, '');
  return text.trim() === '' ? undefined : text;
}

function intentFor(o: RunOptions, prompt: string | undefined): RunIntent {
  const serving = o.inputFormat === 'stream-json';
  if (o.continueInterrupted) return { type: 'continue', planId: o.planId };
  if (prompt !== undefined) return { type: 'prompt', acceptDegraded: o.acceptDegraded };
  if (o.autoContinue) return { type: 'auto_continue', planId: o.planId };
  return serving ? { type: 'serve' } : { type: 'inspect' };
}

export function resultMessage(sessionId: string, newId: () => string, fields: ResultFields): ResultMessage {
  return { type: 'result', uuid: newId(), session_id: sessionId, ...fields };
}

export function errorFields(code: string, message: string, durationMs = 0): ResultFields {
  return {
    subtype: 'error_during_execution',
    is_error: true,
    duration_ms: Math.round(durationMs),
    duration_api_ms: 0,
    num_turns: 0,
    usage: { input_tokens: 0, output_tokens: 0 },
    permission_denials: [],
    error: { code, message },
  };
}

export function successFields(result: string, durationMs = 0): ResultFields {
  return {
    subtype: 'success',
    is_error: false,
    duration_ms: Math.round(durationMs),
    duration_api_ms: 0,
    num_turns: 0,
    result,
    usage: { input_tokens: 0, output_tokens: 0 },
    permission_denials: [],
  };
}

export function exitCodeForTurn(turn: TurnResult): number {
  if (turn.aborted === 'sigterm') return ExitCode.sigterm;
  if (turn.aborted) return ExitCode.sigint;
  if (!turn.is_error) return ExitCode.success;
  return exitCodeFor(turn.error?.code ?? 'internal');
}

export function recoveryLine(opened: OpenedSession, decision: Decision, newId: () => string): SystemRecoveryMessage | null {
  if (!opened.plan || !opened.loaded) return null;
  const line: SystemRecoveryMessage = {
    type: 'system',
    subtype: 'recovery',
    uuid: newId(),
    session_id: opened.sessionId,
    ...toRecoverySummary(opened.plan, opened.loaded.conversation),
    action: decision.action,
  };
  if (decision.action === 'refused') line.reason = decision.reason;
  return line;
}

export function printInit(out: OutputSink, opened: OpenedSession, o: RunOptions, io: RunIo): void {
  out.emit({
    type: 'system',
    subtype: 'init',
    uuid: io.session.newId(),
    session_id: opened.sessionId,
    cwd: io.session.cwd,
    tools: [...TOOL_NAMES],
    model: configuredModel(o, io.env),
    permission_mode: o.approvalMode,
    mend_version: io.session.version,
    resumed: opened.resumed,
    capabilities: { ...CAPABILITIES },
  });
}

export async function runCommand(o: RunOptions, io: RunIo): Promise<number> {
  const started = io.clock();
  const out = createOutputSink(o.outputFormat, io.stdout, io.stderr, o.debug);
  for (const flag of o.ignoredFlags) out.debug(`ignoring ${flag}: it means nothing to mend`);
  let sessionIdForErrors = o.sessionId ?? '';
  const fail = (code: string, message: string): number => {
    out.result(resultMessage(sessionIdForErrors, io.session.newId, errorFields(code, message, io.clock() - started)));
    return exitCodeFor(code);
  };

  let opened: OpenedSession | undefined;
  try {
    const prompt = await resolvePrompt(o, io.stdin);
    const intent = intentFor(o, prompt);
    const needsWrite = intent.type !== 'inspect' || o.forkSession;
    if (!opened && intent.type === 'inspect' && !o.continue && o.resume === undefined) {
      throw new MendError('usage', 'nothing to do: give a prompt with -p, pipe one on stdin, or resume a session');
    }
    const provider = lazyProvider(o, io.env);
    // A prompt always needs the model: a configuration error must come before anything touches the disk.
    if (intent.type === 'prompt') await provider();
    opened = await openSession(o, io.session, needsWrite);
    sessionIdForErrors = opened.sessionId;
    out.debug(`session ${opened.sessionId} at ${opened.logPath} (${opened.store ? 'locked for writing' : 'read-only, no lock'})`);
    if (opened.plan) {
      out.debug(`plan ${opened.plan.planId}: ${opened.plan.kind}, cause ${opened.plan.cause}, ${opened.plan.repairs.length} repair(s)`);
      for (const d of opened.plan.diagnostics) out.debug(`diagnostic ${JSON.stringify(d)}`);
    }

    printInit(out, opened, o, io);
    const decision = decideRecoveryAction(opened.plan, intent);
    const line = recoveryLine(opened, decision, io.session.newId);
    if (line) {
      out.emit(line);
      out.setRecovery(line);
      if (line.visible_notice) out.notice(line.visible_notice);
    }

    if (o.inputFormat === 'stream-json') {
      const { serveStreamJson } = await import('./serve-stream-json.js');
      return await serveStreamJson(o, io, out, opened, decision);
    }
    if (decision.action === 'refused') return fail(decision.code, decision.reason);
    if (decision.execute === 'nothing') {
      const message = 'message' in decision && decision.message ? decision.message : 'session inspected';
      out.result(resultMessage(opened.sessionId, io.session.newId, successFields(message, io.clock() - started)));
      return ExitCode.success;
    }

    const agent = createAgent(opened, o, io, out, headlessApproval(o), provider);
    const turnOptions = { signal: io.signal, maxTurns: o.maxTurns, includePartialMessages: o.includePartialMessages };
    let turn: TurnResult;
    if (decision.execute === 'continuation') {
      turn = await agent.runContinuation(opened.plan!, turnOptions);
    } else {
      if (decision.action === 'continue') await agent.recordRecoveryStart(opened.plan!);
      turn = await agent.runPrompt([{ text: prompt ?? '' } satisfies Part], turnOptions);
    }
    const { aborted: _aborted, ...fields } = turn;
    out.result(resultMessage(opened.sessionId, io.session.newId, fields));
    return exitCodeForTurn(turn);
  } catch (error) {
    if (isMendError(error)) return fail(error.code, error.message);
    return fail('internal', error instanceof Error ? error.message : String(error));
  } finally {
    opened?.close();
  }
}

export function createAgent(
  opened: OpenedSession,
  o: RunOptions,
  io: RunIo,
  out: OutputSink,
  approve = headlessApproval(o),
  provider = lazyProvider(o, io.env),
): AgentSession {
  const store = opened.store;
  if (!store) throw new MendError('internal', 'a run that writes needs the session lock');
  return new AgentSession({
    sessionId: opened.sessionId,
    history: structuredClone(opened.plan?.apiHistory ?? []),
    builder: store.builder,
    sink: store,
    provider,
    tools: createToolPort(io.session.cwd),
    approve,
    emit: (m) => out.emit(m),
    newId: io.session.newId,
    now: io.session.now,
    clock: io.clock,
  });
}
