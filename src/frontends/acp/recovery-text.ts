/**
 * The recovery plan in ACP's words for people: the notice a load shows and the
 * text of `/plan` and `/continue`. The `session/update` mapping itself is shared
 * with the daemon (src/frontends/shared/acp-updates.ts).
 */
import type { RecoverySummaryCamel } from '../../wire/recovery-summary.js';

// ---- the recovery plan, for people ---------------------------------------------------------------

const NOTICE_TITLES: Record<RecoverySummaryCamel['kind'], string> = {
  interrupted_turn: 'The last turn was interrupted during a tool call',
  interrupted_prompt: 'The last prompt got no answer',
  degraded_history: 'The session history is damaged',
  clean: 'The session log was repaired on load',
};

/** The notice a load or resume shows (null for a clean session that needed nothing). */
export function recoveryNotice(summary: RecoverySummaryCamel): { severity: 'info' | 'warning' | 'error'; title: string; description: string } | null {
  if (summary.visibleNotice === null) return null;
  const severity = summary.kind === 'degraded_history' ? 'error' : summary.kind === 'clean' ? 'info' : 'warning';
  const hint = summary.canContinue ? '\nType /continue to continue it, or /plan to see the recovery plan.' : '';
  return { severity, title: NOTICE_TITLES[summary.kind], description: `${summary.visibleNotice}${hint}` };
}

/** The plan as `/plan` and `/continue` show it. */
export function planText(summary: RecoverySummaryCamel | null): string {
  if (summary === null) return 'Recovery plan: none (the session has no records yet).';
  const lines = [`Recovery plan ${summary.planId}: ${summary.kind} (cause: ${summary.cause})`];
  if (summary.visibleNotice) lines.push(summary.visibleNotice);
  if (summary.repairs.length > 0) lines.push(`Repairs: ${summary.repairs.map((r) => `${r.type} x${r.count}`).join(', ')}`);
  if (summary.continuation) lines.push(`Continuation: ${summary.continuation.displayText}`);
  lines.push(
    summary.canContinue
      ? `Can continue${summary.requiresUserConfirmation ? ' (needs your confirmation: /continue)' : ''}.`
      : summary.kind === 'degraded_history'
        ? 'Cannot continue: a damaged history is never continued.'
        : 'Nothing to continue.',
  );
  return `${lines.join('\n')}\n`;
}
