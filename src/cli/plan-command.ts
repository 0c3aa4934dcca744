/**
 * `mend plan <session-id-or-path> [--json] [--full]`: prints the recovery plan.
 * Takes no lock and never writes. Exit 0 whatever the kind.
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { isMendError, MendError } from '../errors.js';
import { toRecoverySummary } from '../engine/recovery-summary.js';
import { resolveResumeTarget } from '../session/session-paths.js';
import { exitCodeFor, ExitCode } from './exit-codes.js';
import { loadAndPlan, type SessionEnv } from './open-session.js';

export interface PlanIo {
  session: SessionEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function planCommand(args: { target: string; json: boolean; full: boolean }, io: PlanIo): Promise<number> {
  try {
    const path = resolveResumeTarget(args.target, { home: io.session.home, projectRoot: io.session.projectRoot, cwd: io.session.cwd });
    if (!existsSync(path)) throw new MendError('session_not_found', `session not found: ${path}`, { path });
    const { loaded, plan } = await loadAndPlan(path, basename(path).replace(/\.jsonl$/, ''), false);
    const summary = toRecoverySummary(plan, loaded.conversation);
    if (args.json) {
      const out: Record<string, unknown> = {
        planId: plan.planId,
        sessionId: plan.sessionId,
        path,
        kind: plan.kind,
        cause: plan.cause,
        canContinue: plan.canContinue,
        canAutoContinue: plan.canAutoContinue,
        requiresUserConfirmation: plan.requiresUserConfirmation,
        previousAttempts: plan.previousAttempts,
        visibleNotice: plan.visibleNotice ?? null,
        leafUuid: plan.leafUuid,
        repairs: plan.repairs,
        diagnostics: plan.diagnostics,
        historyGaps: loaded.historyGaps,
        continuation: plan.continuation
          ? { mode: plan.continuation.mode, displayText: plan.continuation.displayText, parts: plan.continuation.parts, syntheticCallIds: plan.continuation.syntheticCallIds }
          : null,
        history: summary.history,
      };
      if (args.full) {
        out['originalApiHistory'] = plan.originalApiHistory;
        out['apiHistory'] = plan.apiHistory;
      }
      io.stdout.write(`${JSON.stringify(out)}\n`);
      return ExitCode.success;
    }
    const lines = [
      `session   ${plan.sessionId}`,
      `file      ${path}`,
      `plan      ${plan.planId}`,
      `kind      ${plan.kind} (cause: ${plan.cause})`,
      `policy    can continue: ${yes(plan.canContinue)}, auto-continue: ${yes(plan.canAutoContinue)}, needs confirmation: ${yes(plan.requiresUserConfirmation)}`,
      `attempts  ${plan.previousAttempts} earlier recovery attempt(s)`,
      `history   ${summary.history.records} records, ${summary.history.api_entries} API entries, ${summary.history.gaps} gap(s), ${summary.history.malformed_lines} malformed line(s)${summary.history.torn_tail ? ', torn tail' : ''}`,
      `repairs   ${plan.repairs.length === 0 ? 'none' : ''}`,
      ...plan.repairs.map((r) => `  - ${r.type} ${Object.entries(r).filter(([k]) => k !== 'type').map(([k, v]) => `${k}=${String(v)}`).join(' ')}`),
      ...plan.diagnostics.map((d) => `  ! ${d.code} ${Object.entries(d).filter(([k]) => k !== 'code').map(([k, v]) => `${k}=${String(v)}`).join(' ')}`),
      `continue  ${plan.continuation ? `${plan.continuation.mode}: ${plan.continuation.displayText}` : 'nothing to continue'}`,
    ];
    if (plan.visibleNotice) lines.push('', plan.visibleNotice);
    io.stdout.write(`${lines.join('\n')}\n`);
    return ExitCode.success;
  } catch (error) {
    const code = isMendError(error) ? error.code : 'internal';
    const message = error instanceof Error ? error.message : String(error);
    if (args.json) io.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    io.stderr.write(`mend: error [${code}]: ${message}\n`);
    return exitCodeFor(code);
  }
}

function yes(b: boolean): string {
  return b ? 'yes' : 'no';
}
