/**
 * What the UI shows when a session opens (design 4.1 steps 4 and 5): for a
 * resumed one its history, then the INFO item when the plan is not clean (or
 * a note for a clean plan that still says something), and the read-only panel
 * when another process holds it; for a new one a single status line.
 */
import type { SessionRuntime } from '../../runtime/session-runtime.js';
import { plural } from '../../recovery/visible-notice.js';
import type { ProjectScope } from '../../store/session-store.js';
import { projectMismatch } from '../shared/session-lines.js';
import { historyItems } from './history-items.js';
import { readOnlyPanel, recoveryNotice } from './recovery-notice.js';
import type { UiItem } from './ui-items.js';

/** The items, and the plan id `/continue` must run (the one the INFO item showed). */
export async function sessionIntro(
  runtime: SessionRuntime,
  scope: ProjectScope,
  newId: () => string,
): Promise<{ items: UiItem[]; noticePlanId: string | undefined }> {
  const items: UiItem[] = [];
  let noticePlanId: string | undefined;
  // The history is shown: read with the plan (the TUI opens sessions whole, so nothing is read again).
  const current = runtime.resumed ? await runtime.loadHistory() : null;
  const plan = current?.plan;
  const loaded = current?.loaded;
  if (runtime.resumed && plan && loaded) {
    const records = loaded.conversation.totalRecords;
    items.push({ id: newId(), type: 'status', text: `resumed session ${runtime.sessionId} (${plural(records, 'record')})` });
    items.push(...historyItems(plan.originalApiHistory, newId));
    // As text mode and stream-json say it: a session recorded elsewhere runs its tools here.
    const mismatch = projectMismatch(runtime, scope);
    if (mismatch) items.push({ id: newId(), type: 'panel', label: 'WARNING', tone: 'warning', title: 'another project', lines: [`${mismatch}.`] });
    const decision = runtime.decide({ type: 'continue', planId: plan.planId });
    const notice = recoveryNotice(plan, { activeWriter: runtime.activeWriter, acceptDegraded: runtime.settings.acceptDegraded, decision }, newId);
    if (notice) {
      items.push(notice);
      noticePlanId = plan.planId;
    } else if (plan.visibleNotice) {
      items.push({ id: newId(), type: 'panel', label: 'NOTE', tone: 'note', title: 'clean', lines: [plan.visibleNotice] });
    }
  } else {
    items.push({ id: newId(), type: 'status', text: `new session ${runtime.sessionId}` });
  }
  if (runtime.activeWriter) items.push(readOnlyPanel(runtime.activeWriter, newId));
  return { items, noticePlanId };
}
