/**
 * `mend plan <session-id-or-path> [--json] [--full]`: prints the recovery plan.
 * Opens the session read-only through the runtime: no lease, never writes. Exit
 * 0 whatever the kind.
 */
import { errorCodeOf, errorMessageOf } from '../errors.js';
import type { HostEnv } from '../runtime/host-env.js';
import { SessionRuntime } from '../runtime/session-runtime.js';
import { ExitCode, exitCodeFor } from '../wire/exit-codes.js';
import { camelSummary } from '../frontends/shared/recovery-summary.js';
import { summarizePlan } from '../runtime/plan-summary.js';
import { INSPECT_HOST_OPTIONS, runtimeSettingsFrom } from '../runtime/runtime-settings.js';
import { stripControlSequences } from '../frontends/shared/output-sink.js';
import { plural } from '../recovery/visible-notice.js';

/** What the one-shot commands (plan, sessions, store) use of the one host environment. */
export type CommandIo = Pick<HostEnv, 'runtime' | 'stdout' | 'stderr'>;

export async function planCommand(args: { target: string; json: boolean; full: boolean }, io: CommandIo): Promise<number> {
  try {
    const runtime = await SessionRuntime.openForHost(io.runtime, {
      target: { type: 'resume', target: args.target },
      access: { mode: 'inspect' },
      // Planned from the outline; --full reads the histories by an explicit call below.
      reads: 'plan',
      settings: runtimeSettingsFrom({ host: INSPECT_HOST_OPTIONS }),
    });
    const plan = runtime.recoveryPlan!;
    const loaded = runtime.loadedSession!;
    const path = runtime.ref.location;
    const summary = summarizePlan(plan, loaded.conversation);
    if (args.json) {
      // The camelCase summary ACP and the daemon answer, plus what only this command shows.
      const camel = camelSummary(summary);
      const { planId, ...rest } = camel;
      const out: Record<string, unknown> = {
        planId,
        sessionId: summary.sessionId,
        path,
        ...rest,
        repairDetails: summary.repairDetails,
        leafUuid: plan.leafUuid,
        diagnostics: plan.diagnostics,
        historyGaps: loaded.historyGaps,
        continuation: plan.continuation
          ? { ...camel.continuation, parts: plan.continuation.parts, syntheticCallIds: plan.continuation.syntheticCallIds }
          : null,
      };
      if (args.full) {
        const full = await runtime.loadHistory();
        out['originalApiHistory'] = full?.plan.originalApiHistory ?? [];
        out['apiHistory'] = full?.plan.apiHistory ?? [];
      }
      io.stdout.write(`${JSON.stringify(out)}\n`);
      return ExitCode.success;
    }
    const origin = loaded.conversation.origin;
    const lines = [
      ...(origin
        ? [
            `agent     ${origin.agent}${origin.agentVersion ? ` ${origin.agentVersion}` : ''}${origin.imported ? ` (copied from ${origin.path}, sha256 ${origin.sha256.slice(0, 16)}…${origin.planId ? `, source plan ${origin.planId}` : ''})` : ' (read in place, never written)'}`,
          ]
        : []),
      `session   ${plan.sessionId}`,
      `file      ${path}`,
      `plan      ${plan.planId}`,
      `kind      ${plan.kind} (cause: ${plan.cause})`,
      `policy    can continue: ${yes(plan.canContinue)}, auto-continue: ${yes(plan.canAutoContinue)}, needs confirmation: ${yes(plan.requiresUserConfirmation)}`,
      `attempts  ${plural(plan.previousAttempts, 'earlier recovery attempt')}`,
      `history   ${plural(summary.history.records, 'record')}, ${plural(summary.history.apiEntries, 'API entry', 'API entries')}, ${plural(summary.history.gaps, 'gap')}, ${plural(summary.history.malformedLines, 'malformed line')}${summary.history.tornTail ? ', torn tail' : ''}`,
      `repairs   ${plan.repairs.length === 0 ? 'none' : ''}`,
      ...plan.repairs.map(
        (r) =>
          `  - ${r.type} ${Object.entries(r)
            .filter(([k]) => k !== 'type')
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(' ')}`,
      ),
      ...plan.diagnostics.map(
        (d) =>
          `  ! ${d.code} ${Object.entries(d)
            .filter(([k]) => k !== 'code')
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(' ')}`,
      ),
      `continue  ${plan.continuation ? `${plan.continuation.mode}: ${plan.continuation.displayText}` : 'nothing to continue'}`,
    ];
    if (plan.visibleNotice) lines.push('', plan.visibleNotice);
    // Session content comes from elsewhere too (imports, Qwen Code logs): shown, never interpreted.
    io.stdout.write(`${stripControlSequences(lines.join('\n'))}\n`);
    return ExitCode.success;
  } catch (error) {
    const code = errorCodeOf(error);
    const message = errorMessageOf(error);
    if (args.json) io.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    io.stderr.write(`mend: error [${code}]: ${stripControlSequences(message)}\n`);
    return exitCodeFor(code);
  }
}

function yes(b: boolean): string {
  return b ? 'yes' : 'no';
}
