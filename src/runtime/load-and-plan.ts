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
import { buildConversation, type BuildOptions } from '../session/conversation-loader.js';
import { planFromOutline, type OutlinePlan } from './outline-plan.js';
import { outlineFacts, planAndFacts, planWithCheckpoint, refreshCheckpoint, type PlannedLog } from './checkpoint/plan-checkpoints.js';
import type { SessionOutline } from '../session/outline/history-reader.js';
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
): Promise<{ loaded: LoadedSession; plan: SessionRecoveryPlan }> {
  const read = await store.read(ref);
  const loaded = buildConversation(read, buildOptionsFor(ref));
  const origin = read.origin ?? importedOrigin(read.records[0]?.record);
  if (origin) loaded.conversation.origin = origin;
  // A live holder is an input of the plan: a session being written is `running`, not crashed.
  return { loaded, plan: buildPlanForSession(loaded, { allowAutoContinue }, activeWriter) };
}

/**
 * The same plan without its histories, from the store's outline (outline-plan.ts): what a
 * run that only shows the plan reads. Equal to loadAndPlan's but for the histories and
 * records it leaves out (test/session/outline/history-readers.test.ts).
 */
export async function loadPlanHead(store: SessionStore, ref: SessionRef, allowAutoContinue: boolean, activeWriter: ActiveWriter | null): Promise<OutlinePlan> {
  // A log with a checkpoint slot is planned through its checkpoint (src/runtime/checkpoint): the same plan.
  const slot = store.checkpointSlot?.(ref) ?? null;
  if (slot !== null) return planWithCheckpoint({ slot, build: buildOptionsFor(ref), options: { allowAutoContinue }, activeWriter, originOf: originOfOutline });
  const outline = await store.readOutline(ref);
  const planned = planFromOutline(outline, buildOptionsFor(ref), { allowAutoContinue }, activeWriter);
  const origin = originOfOutline(outline);
  if (origin) planned.loaded.conversation.origin = origin;
  return planned;
}

/**
 * The plan head of a session and what a listing shows of it (records, first and last
 * record time, first prompt), through its plan checkpoint when the store keeps one.
 */
export async function loadPlanAndFacts(
  store: SessionStore,
  ref: SessionRef,
  allowAutoContinue: boolean,
  activeWriter: ActiveWriter | null,
): Promise<PlannedLog> {
  const slot = store.checkpointSlot?.(ref) ?? null;
  if (slot !== null) return planAndFacts({ slot, build: buildOptionsFor(ref), options: { allowAutoContinue }, activeWriter, originOf: originOfOutline });
  const outline = await store.readOutline(ref);
  const planned = planFromOutline(outline, buildOptionsFor(ref), { allowAutoContinue }, activeWriter);
  const origin = originOfOutline(outline);
  if (origin) planned.loaded.conversation.origin = origin;
  return { planned, facts: outlineFacts(outline) };
}

/** Largest log (bytes of a file, rows of a database) a refresh reads whole to make its first checkpoint (a new session's). */
const REFRESH_FULL_PASS = { bytes: 2 * 1024 * 1024, rows: 4000 };

/**
 * Brings the plan checkpoint of the session's log up to date (after a turn appended to it);
 * nothing when the store keeps none. Never throws.
 */
export async function refreshPlanCheckpoint(store: SessionStore, ref: SessionRef): Promise<void> {
  const slot = store.checkpointSlot?.(ref) ?? null;
  if (slot === null) return;
  await refreshCheckpoint({ slot, build: buildOptionsFor(ref), options: {}, activeWriter: null, originOf: originOfOutline }, REFRESH_FULL_PASS);
}

function originOfOutline(outline: SessionOutline): SessionOrigin | undefined {
  return outline.read.origin ?? importedOrigin(outline.source.count > 0 && outline.source.type(0) === 'system' ? outline.source.full([0])[0] : undefined);
}

/** An empty or fully damaged log names no session; its ref may. */
function buildOptionsFor(ref: SessionRef): BuildOptions {
  return isSessionId(ref.sessionId) ? { fallbackSessionId: ref.sessionId } : {};
}

/** The provenance a session copied from another agent's file starts with (foreign-import.ts). */
function importedOrigin(first: ChatRecord | undefined): SessionOrigin | undefined {
  if (first?.type !== 'system' || first.subtype !== FOREIGN_IMPORT_SUBTYPE) return undefined;
  const payload = ForeignImportPayloadSchema.safeParse(first.systemPayload);
  return payload.success ? { ...payload.data, imported: true } : undefined;
}
