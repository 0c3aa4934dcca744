/**
 * The start every stdio run shares (headless and stream-json input): what the
 * command line asks for, the session opened through the runtime, and the first
 * lines printed. A configuration error comes before anything touches storage.
 */
import type { Readable } from 'node:stream';
import { MendError } from '../../errors.js';
import { plural } from '../../recovery/visible-notice.js';
import type { Decision, RunIntent } from '../../runtime/continuation-policy.js';
import type { HostEnv } from '../../runtime/host-env.js';
import { runtimeSettingsFrom } from '../../runtime/runtime-settings.js';
import { SessionRuntime, type HostAccess, type HostOpenRequest } from '../../runtime/session-runtime.js';
import { isSessionId } from '../../session/session-ids.js';
import { isShellRule } from '../../wire/tool-aliases.js';
import { MCP_PREFIX } from '../../wire/mcp-names.js';

/** `mcp__server`, `mcp__server__tool`: whether the server offers it is known only once it is up. */
const isMcpToolRule = (name: string): boolean => name.startsWith(MCP_PREFIX);
import type { OutputSink } from './output-sink.js';
import type { StdioRunOptions } from './run-options.js';
import { printSessionStart } from './session-lines.js';

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Stdin is the prompt only for `-p -`, or with no prompt, no session flag, no stream-json input and a non-TTY stdin. */
export async function resolvePrompt(o: StdioRunOptions, host: Pick<HostEnv, 'stdin'>): Promise<string | undefined> {
  if (o.prompt !== undefined) return o.prompt.trim() === '' ? undefined : o.prompt;
  // host.stdin is read only past the flags: a resume never makes a stdin stream (HostEnv).
  const implicit =
    !o.promptFromStdin && !o.continue && o.resume === undefined && o.sessionId === undefined && o.inputFormat !== 'stream-json' && host.stdin.isTTY !== true;
  if (!o.promptFromStdin && !implicit) return undefined;
  const text = (await readAll(host.stdin)).replace(/\r?\n$/, '');
  return text.trim() === '' ? undefined : text;
}

export function intentFor(o: StdioRunOptions, prompt: string | undefined): RunIntent {
  const serving = o.inputFormat === 'stream-json';
  if (o.continueInterrupted) return { type: 'continue', planId: o.planId };
  if (prompt !== undefined) return { type: 'prompt', acceptDegraded: o.acceptDegraded };
  if (o.autoContinue) return { type: 'auto_continue', planId: o.planId };
  return serving ? { type: 'serve' } : { type: 'inspect' };
}

/** How a stdio run or the terminal UI opens its session: the target, a fork, and the settings of the command line. */
export function hostOpenRequestFor(o: StdioRunOptions, access: HostAccess): HostOpenRequest {
  const resuming = o.continue || o.resume !== undefined;
  return {
    target: !resuming ? { type: 'new', sessionId: o.sessionId } : o.resume !== undefined ? { type: 'resume', target: o.resume } : { type: 'latest' },
    fork: resuming && o.forkSession ? { sessionId: o.sessionId } : undefined,
    access,
    settings: runtimeSettingsFrom({ host: o, session: { allowAutoContinue: o.autoContinue, acceptDegraded: o.acceptDegraded } }),
  };
}

export interface StartedRun {
  runtime: SessionRuntime;
  intent: RunIntent;
  decision: Decision;
  prompt: string | undefined;
}

export async function startStdioRun(o: StdioRunOptions, host: HostEnv, out: OutputSink, onSessionId: (id: string) => void): Promise<StartedRun> {
  for (const flag of o.ignoredFlags) out.debug(`ignoring ${flag}: it means nothing to mend`);
  const prompt = await resolvePrompt(o, host);
  const intent = intentFor(o, prompt);
  if (intent.type === 'inspect' && !o.continue && o.resume === undefined) {
    throw new MendError('usage', 'nothing to do: give a prompt with -p, pipe one on stdin, or resume a session');
  }
  // A prompt always needs the model: a configuration error must come before anything touches storage.
  if (intent.type === 'prompt') await host.runtime.provider(o.model)();
  // The runtime decides the lease (write unless the run only inspects) and the reader (the outline for a plan-only run).
  const runtime = await SessionRuntime.openForHost(host.runtime, hostOpenRequestFor(o, { mode: 'run', intent }));
  onSessionId(runtime.sessionId);
  out.debug(`session ${runtime.sessionId} at ${runtime.ref.location} (${runtime.writable ? 'leased for writing' : 'read-only, no lease'})`);
  const plan = runtime.recoveryPlan;
  if (plan) {
    out.debug(`plan ${plan.planId}: ${plan.kind}, cause ${plan.cause}, ${plural(plan.repairs.length, 'repair')}`);
    for (const d of plan.diagnostics) out.debug(`diagnostic ${JSON.stringify(d)}`);
  }
  for (const failed of o.mcpFailed ?? []) runtime.addFailedMcpServer(failed.name, failed.error);
  // `init` lists each server as connected or failed (and its tools): wait for them to settle, each bounded by its connect timeout.
  await runtime.mcpSettled();
  const decision = runtime.decide(intent);
  printSessionStart(out, runtime, host, decision, o.resume !== undefined && !isSessionId(o.resume), o.approvalModeName);
  const unknown = o.allowedTools.filter((name) => !isShellRule(name) && !isMcpToolRule(name) && !host.toolNames.includes(name));
  if (unknown.length > 0) {
    out.emit({
      type: 'system',
      subtype: 'warning',
      uuid: host.runtime.newId(),
      session_id: runtime.sessionId,
      warning: { code: 'unknown_tool', message: `--allowed-tools names no tool mend has: ${unknown.join(', ')} (tools: ${host.toolNames.join(', ')})` },
    });
  }
  return { runtime, intent, decision, prompt };
}
