/**
 * Continuing another agent's session in mend: its translated records are copied into
 * mend's store as a NEW mend session, under a first `foreign_import` record that says
 * where they came from (agent, file, SHA-256 of the bytes read, the plan id of the file
 * as read in place). The owner's file is only read. Call ids stay; tool names become
 * mend's where they mean the same (src/foreign/tool-names.ts); thoughts stay thoughts.
 */
import { RecordBuilder } from '../engine/record-builder.js';
import type { ForeignAgent } from '../foreign/adapter.js';
import { FOREIGN_IMPORT_SUBTYPE, type ForeignImportPayload } from '../foreign/import-record.js';
import { toMendCall } from '../foreign/tool-names.js';
import { MendError } from '../errors.js';
import type { ChatRecord, Part } from '../session/records.js';
import type { SessionRef, WriterLease } from '../store/session-store.js';
import { contextFor, loadAndPlan } from './load-and-plan.js';
import type { RuntimeDeps } from './runtime-types.js';

export interface ImportedSession {
  ref: SessionRef;
  lease: WriterLease;
  sessionId: string;
  /** The plan id of the owner's file as read in place (a host that saw it may name it). */
  sourcePlanId: string;
}

function mapParts(agent: ForeignAgent, parts: Part[], names: Map<string, string>): Part[] {
  return parts.map((part) => {
    if (part.functionCall) {
      const call = toMendCall(agent, part.functionCall);
      if (call.id) names.set(call.id, call.name);
      return call === part.functionCall ? part : { ...part, functionCall: call };
    }
    const response = part.functionResponse;
    if (response?.id && names.has(response.id) && names.get(response.id) !== response.name) {
      return { ...part, functionResponse: { ...response, name: names.get(response.id)! } };
    }
    return part;
  });
}

export async function importForeignSession(deps: RuntimeDeps, source: SessionRef, sessionId = deps.newId()): Promise<ImportedSession> {
  const agent = source.foreign?.agent;
  if (!agent) throw new MendError('internal', `${source.location} is not another agent's session`);
  const { store, scope } = deps;
  const read = await store.read(source);
  const origin = read.origin;
  if (!origin) throw new MendError('internal', `${source.location} was read without its provenance`);
  // The plan of the file as read in place: the id `mend plan PATH` showed.
  const { plan } = await loadAndPlan(store, source, false, null);

  const ref = await store.newSession(scope, sessionId);
  const lease = await store.acquire(ref, deps.identity);
  try {
    const builder = new RecordBuilder(contextFor(sessionId, deps), null);
    const payload: ForeignImportPayload = {
      agent,
      agentVersion: origin.agentVersion,
      sessionId: origin.sessionId,
      path: origin.path,
      sha256: origin.sha256,
      planId: plan.planId,
    };
    const head = builder.system(FOREIGN_IMPORT_SUBTYPE, payload);
    const names = new Map<string, string>();
    // In the order of each record's last line: the source's leaf (the record of its last line) stays the leaf.
    const ordered = [...read.records].sort((a, b) => (a.lastLine ?? a.line) - (b.lastLine ?? b.line));
    const records = ordered.map(({ record }) => {
      const copy = { ...record, sessionId } as ChatRecord;
      // The owner's roots hang under the provenance record (a subagent's stay roots of their own).
      if (copy.parentUuid === null && (copy as { isSidechain?: unknown }).isSidechain !== true) copy.parentUuid = head.uuid;
      if (copy.type !== 'system') copy.message = { ...copy.message, parts: mapParts(agent, copy.message.parts, names) } as typeof copy.message;
      return copy;
    });
    await lease.append(head, { durable: records.length === 0 });
    for (let i = 0; i < records.length; i++) await lease.append(records[i]!, { durable: i === records.length - 1 });
    return { ref, lease, sessionId, sourcePlanId: plan.planId };
  } catch (error) {
    await lease.release();
    throw error;
  }
}
