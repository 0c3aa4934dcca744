/** `/plan`: the full recovery plan of the open session as a panel (never the histories themselves, which are shown above). */
import type { RecoveryPlanHead } from '../../recovery/plan-types.js';
import type { ConversationHead } from '../../session/conversation.js';
import { toRecoverySummary } from '../shared/recovery-summary.js';
import { plural } from '../../recovery/visible-notice.js';
import type { UiItem } from './ui-items.js';

export function planPanel(plan: RecoveryPlanHead, conversation: ConversationHead, newId: () => string): Extract<UiItem, { type: 'panel' }> {
  const s = toRecoverySummary(plan, conversation);
  const lines = [
    `kind ${s.kind} · cause ${s.cause} · previous attempts ${s.previous_attempts}`,
    `can continue ${yes(s.can_continue)} · auto ${yes(s.can_auto_continue)} · needs confirmation ${yes(s.requires_user_confirmation)}`,
    `history: ${plural(s.history.records, 'record')}, ${plural(s.history.api_entries, 'API entry', 'API entries')}, ${plural(s.history.gaps, 'gap')}, ${plural(s.history.malformed_lines, 'malformed line')}${s.history.torn_tail ? ', torn tail' : ''}`,
  ];
  if (s.visible_notice) lines.push(`notice: ${s.visible_notice}`);
  if (s.repair_details.length === 0) lines.push('repairs: none');
  else {
    lines.push(`repairs: ${s.repairs.map((r) => `${r.type} ×${r.count}`).join(', ')}`);
    for (const r of s.repair_details)
      lines.push(
        `  - ${Object.entries(r)
          .map(([k, v]) => (k === 'type' ? String(v) : `${k}=${String(v)}`))
          .join(' ')}`,
      );
  }
  lines.push(
    s.continuation
      ? `continuation: ${s.continuation.mode}, ${plural(s.continuation.part_count, 'part')}: ${s.continuation.display_text}`
      : 'continuation: none',
  );
  for (const d of plan.diagnostics) lines.push(`diagnostic: ${JSON.stringify(d)}`);
  return { id: newId(), type: 'panel', label: 'PLAN', tone: 'note', title: s.plan_id, lines };
}

function yes(value: boolean): string {
  return value ? 'yes' : 'no';
}
