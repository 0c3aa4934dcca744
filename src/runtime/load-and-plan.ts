/**
 * Loading and planning a session the way every entrypoint does (so the same session
 * gives the same plan id everywhere), and the small outcome and record-context values
 * the runtime builds.
 */
import type { TurnOutcome } from '../engine/engine-events.js';
import type { RecordContext } from '../engine/record-builder.js';
import type { SessionRecoveryPlan } from '../recovery/plan-types.js';
import type { ActiveWriter } from '../session/active-writer.js';
import type { LoadedSession, SessionOrigin } from '../session/conversation.js';
import type { ChatRecord } from '../session/records.js';
import { FOREIGN_IMPORT_SUBTYPE, ForeignImportPayloadSchema } from '../foreign/import-record.js';
import { isSessionId } from '../session/session-ids.js';
import type { SessionRef, SessionStore } from '../store/session-store.js';
import { buildPlanForSession } from '../recovery/build-plan.js';
import { buildConversation } from '../session/conversation-loader.js';
import { planFromOutline } from './outline-plan.js';
import type { RuntimeDeps } from './runtime-types.js';

export function contextFor(sessionId: string, deps: RuntimeDeps): RecordContext {
  return { sessionId, cwd: deps.cwd, version: deps.version, newId: deps.newId, now: deps.now };
}

export function refusedOutcome(code: string, message: string, durationMs = 0): TurnOutcome {
  return {
    status: 'error',
    error: { code, message },
    durationMs,
    apiDurationMs: 0,
    numTurns: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    permissionDenials: [],
  };
}

/** The same loader and planner every entrypoint uses, so the same session gives the same plan id everywhere. */
export async function loadAndPlan(
  store: SessionStore,
  ref: SessionRef,
  allowAutoContinue: boolean,
  activeWriter: ActiveWriter | null,
  histories: 'eager' | 'on_demand' = 'eager',
): Promise<{ loaded: LoadedSession; plan: SessionRecoveryPlan }> {
  // An empty or fully damaged log names no session; its ref may.
  const build = isSessionId(ref.sessionId) ? { fallbackSessionId: ref.sessionId } : {};
  // A live holder is an input of the plan: a session being written is `running`, not crashed.
  if (histories === 'on_demand') {
    // The outline, not every full record: the histories are read when something asks (outline-plan.ts).
    const outline = await store.readOutline(ref);
    const planned = planFromOutline(outline, build, { allowAutoContinue }, activeWriter);
    const origin =
      outline.read.origin ?? importedOrigin(outline.source.count > 0 && outline.source.type(0) === 'system' ? outline.source.full([0])[0] : undefined);
    if (origin) planned.loaded.conversation.origin = origin;
    return planned;
  }
  const read = await store.read(ref);
  const loaded = buildConversation(read, build);
  const origin = read.origin ?? importedOrigin(read.records[0]?.record);
  if (origin) loaded.conversation.origin = origin;
  return { loaded, plan: buildPlanForSession(loaded, { allowAutoContinue }, activeWriter) };
}

/** The provenance a session copied from another agent's file starts with (foreign-import.ts). */
function importedOrigin(first: ChatRecord | undefined): SessionOrigin | undefined {
  if (first?.type !== 'system' || first.subtype !== FOREIGN_IMPORT_SUBTYPE) return undefined;
  const payload = ForeignImportPayloadSchema.safeParse(first.systemPayload);
  return payload.success ? { ...payload.data, imported: true } : undefined;
}
