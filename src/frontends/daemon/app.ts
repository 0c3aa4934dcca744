/**
 * `mend serve`'s routes on Hono: Qwen Code's daemon REST + SSE shapes (so its
 * `DaemonClient` works unchanged) with mend's recovery on every load and
 * resume. Bodies are validated with the zod schemas of src/wire/daemon-api.ts;
 * every error answers `{error, code}` with a status from the code.
 */
import { randomUUID } from 'node:crypto';
import { Hono, type Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { MendError, errorCodeOf, errorMessageOf, isMendError } from '../../errors.js';
import type { ProjectSessionRow } from '../../runtime/list-sessions.js';
import {
  ApprovalModeBodySchema,
  CLIENT_ID_HEADER,
  ContinueBodySchema,
  CreateSessionBodySchema,
  EVENT_EPOCH_HEADER,
  EmptyBodySchema,
  ModelBodySchema,
  PermissionBodySchema,
  PromptBodySchema,
  RestoreSessionBodySchema,
  SSE_STREAM_ID_HEADER,
  SessionIdSchema,
  type Capabilities,
} from '../../wire/daemon-api.js';
import type { WireErrorCode } from '../../wire/error-codes.js';
import type { DaemonSession } from './daemon-session.js';
import { promptParts } from '../shared/prompt-parts.js';
import { requestServerSpecs } from './daemon-mcp-servers.js';
import { guards, type GuardConfig } from './guards.js';
import { approvalModeOf, type OpenKind, type SessionRegistry } from './session-registry.js';
import { sseFrame } from './sse-frames.js';
import { sseResponse, type SseSink } from './sse-sink.js';

export interface AppLimits {
  maxBodyBytes: number;
  maxPendingPromptsPerSession: number;
  maxQueuedEvents: number;
  journalEvents: number;
  heartbeatMs: number;
  sseRetryMs: number;
  sessionRestoreTimeoutMs: number;
}

export interface AppDeps {
  registry: SessionRegistry;
  guard: GuardConfig;
  limits: AppLimits;
  version: string;
  roots: readonly string[];
  log: (line: string) => void;
  /** Event streams written to node's response directly (sse-sink.ts); false: through hono's streamSSE. */
  sseDirect?: boolean | undefined;
}

const STATUS: Partial<Record<WireErrorCode, ContentfulStatusCode>> = {
  usage: 400,
  invalid_request: 400,
  invalid_session_id: 400,
  invalid_client_id: 400,
  unauthorized: 401,
  forbidden_host: 403,
  outside_roots: 403,
  invalid_mcp_config: 400,
  not_found: 404,
  session_not_found: 404,
  no_session_to_continue: 404,
  session_exists: 409,
  session_locked: 409,
  turn_running: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unknown_session_format: 422,
  foreign_session_read_only: 409,
  session_read_failed: 500,
  session_write_failed: 500,
  prompt_queue_full: 503,
  server_closing: 503,
};

/** How long an open waits for its MCP servers to connect or fail before it answers (they may still be `pending`). */
const MCP_OPEN_WAIT_MS = 10_000;

export const FEATURES = [
  'session_id_override',
  'session_load',
  'session_resume',
  'session_context',
  'session_recovery',
  'continue_last_turn',
  'continue_plan_id',
  'permissions',
  'approval_mode',
  'model_switch',
  'heartbeat',
  'sse_resume',
  'workspace_sessions',
  'session_mcp_servers',
] as const;

function errorAnswer(c: Context, error: unknown, log: (line: string) => void): Response {
  const code = errorCodeOf(error);
  const status = STATUS[code] ?? 500;
  if (status >= 500 && code !== 'prompt_queue_full' && code !== 'server_closing')
    log(`error [${code}] ${c.req.method} ${c.req.path}: ${errorMessageOf(error)}`);
  const details = isMendError(error) ? (error.details ?? {}) : {};
  return c.json({ ...details, error: errorMessageOf(error), code }, status);
}

/** Reads and validates a JSON body; an empty body is `{}`. */
async function body<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch {
      throw new MendError('invalid_request', 'the body is not valid JSON');
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const { issues } = parsed.error;
    const message = `invalid body: ${issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}`;
    // Only the MCP server entries are wrong: their own code, naming the first server at fault.
    if (issues.every((i) => i.path[0] === 'mcpServers')) {
      const server = issues[0]?.path[1];
      throw new MendError('invalid_mcp_config', message, server !== undefined ? { server: String(server) } : undefined);
    }
    throw new MendError('invalid_request', message);
  }
  return parsed.data;
}

function sessionIdParam(c: Context): string {
  const raw = c.req.param('id') ?? '';
  if (!SessionIdSchema.safeParse(raw).success) throw new MendError('invalid_session_id', `not a session id (a UUID): ${JSON.stringify(raw.slice(0, 80))}`);
  return raw.toLowerCase();
}

function clientIdOf(c: Context): string | undefined {
  return c.req.header(CLIENT_ID_HEADER) || undefined;
}

/** An open session; a client id it never issued is refused (Qwen's client then resumes and retries). */
function sessionOf(c: Context, registry: SessionRegistry): DaemonSession {
  const session = registry.require(sessionIdParam(c));
  const clientId = clientIdOf(c);
  if (clientId !== undefined && !session.knowsClient(clientId)) {
    throw new MendError('invalid_client_id', `client ${clientId} is not attached to session ${session.sessionId}: resume the session`);
  }
  return session;
}

function listing(row: ProjectSessionRow & { open: DaemonSession | undefined }, cwd: string): Record<string, unknown> {
  return {
    sessionId: row.id,
    workspaceCwd: cwd,
    ...(row.started ? { createdAt: row.started } : {}),
    ...(row.lastUpdate ? { updatedAt: row.lastUpdate } : {}),
    ...(row.firstPrompt ? { displayName: row.firstPrompt.replace(/\s+/g, ' ').slice(0, 80) } : {}),
    hasActivePrompt: row.open?.hasActivePrompt ?? false,
    records: row.records,
    recoveryKind: row.kind,
    planId: row.planId,
    canContinue: row.canContinue,
    cause: row.cause,
    // Another agent's session, read in place: whose it is, its file and version.
    ...(row.agent ? { agent: row.agent, agentVersion: row.agentVersion ?? null, path: row.path, size: row.size ?? null } : {}),
    ...(row.error ? { error: row.error } : {}),
  };
}

function parseLastEventId(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

export function createApp(deps: AppDeps): Hono {
  const { registry, limits, log } = deps;
  const app = new Hono();

  app.onError((error, c) => errorAnswer(c, error, log));
  app.notFound((c) => errorAnswer(c, new MendError('not_found', `no route ${c.req.method} ${c.req.path}`), log));
  for (const guard of guards(deps.guard)) app.use('*', guard);

  app.get('/health', (c) => c.json({ status: 'ok' }));

  app.get('/capabilities', (c) => {
    const answer: Capabilities & Record<string, unknown> = {
      v: 1,
      mode: 'native',
      protocolVersions: { current: 'v1' },
      mendVersion: deps.version,
      features: [...FEATURES],
      modelServices: [],
      transports: ['rest'],
      policy: { permission: 'first-responder' },
      workspaceCwd: deps.roots[0]!,
      workspaces: deps.roots.map((cwd) => ({ cwd })),
      limits: {
        maxPendingPromptsPerSession: limits.maxPendingPromptsPerSession,
        sessionRestoreTimeoutMs: limits.sessionRestoreTimeoutMs,
        maxBodyBytes: limits.maxBodyBytes,
        maxQueuedEvents: limits.maxQueuedEvents,
        journalEvents: limits.journalEvents,
      },
    };
    return c.json(answer);
  });

  // ---- opening ------------------------------------------------------------------------------

  const open = async (
    c: Context,
    kind: OpenKind,
    sessionId: string | undefined,
    request: { cwd?: string | undefined; approvalMode?: string | undefined; mcpServers?: Record<string, unknown> | undefined },
  ) => {
    // Checked before anything opens: a bad entry starts nothing.
    const mcpServers = requestServerSpecs(request.mcpServers);
    const { session, attached } = await registry.open(kind, { cwd: request.cwd, approvalMode: request.approvalMode, mcpServers, sessionId });
    // Servers still connecting get a moment, so the answer usually says connected or failed; /context says it later.
    await session.mcpSettled(MCP_OPEN_WAIT_MS);
    const clientId = session.attach();
    const { state, recovery } = await session.state();
    log(`session ${session.sessionId} ${attached ? 'attached' : kind === 'create' ? 'created' : `${kind}ed`} (${session.workspaceCwd})`);
    return {
      sessionId: session.sessionId,
      workspaceCwd: session.workspaceCwd,
      attached,
      clientId,
      createdAt: session.createdAt,
      hasActivePrompt: session.hasActivePrompt,
      lastEventId: session.journal.lastId,
      eventEpoch: session.journal.epoch,
      state,
      mcpServers: session.mcpServers(),
      ...(kind === 'create' ? {} : { recovery }),
      ...(kind === 'load' ? { compactedReplay: await session.replay(), liveJournal: [] } : {}),
    };
  };

  app.post('/session', async (c) => {
    const request = await body(c, CreateSessionBodySchema);
    return c.json(
      await open(c, 'create', request.sessionId?.toLowerCase(), { cwd: request.cwd, approvalMode: request.approvalMode, mcpServers: request.mcpServers }),
    );
  });
  app.post('/session/:id/load', async (c) => c.json(await open(c, 'load', sessionIdParam(c), await body(c, RestoreSessionBodySchema))));
  app.post('/session/:id/resume', async (c) => c.json(await open(c, 'resume', sessionIdParam(c), await body(c, RestoreSessionBodySchema))));

  app.delete('/session/:id', async (c) => {
    const closed = await registry.close(sessionIdParam(c));
    if (closed) log(`session ${c.req.param('id')} closed by a client`);
    return closed ? c.body(null, 204) : errorAnswer(c, new MendError('session_not_found', 'the session is not open in this daemon'), log);
  });

  // ---- state and recovery -------------------------------------------------------------------

  app.get('/session/:id/context', async (c) => {
    const session = sessionOf(c, registry);
    const { state, recovery } = await session.state();
    return c.json({
      v: 1,
      sessionId: session.sessionId,
      workspaceCwd: session.workspaceCwd,
      state,
      recovery,
      hasActivePrompt: session.hasActivePrompt,
      mcpServers: session.mcpServers(),
    });
  });

  app.get('/session/:id/recovery', async (c) => {
    const session = sessionOf(c, registry);
    const summaries = await session.recovery();
    if (!summaries) throw new MendError('session_not_found', 'this session has no records yet');
    return c.json(c.req.query('format') === 'stream-json' ? summaries.snake : summaries.camel);
  });

  app.get('/workspace/:cwd/sessions', async (c) => {
    const cwd = registry.resolveCwd(c.req.param('cwd'));
    const size = Math.max(1, Math.min(1000, Number(c.req.query('size') ?? 20) || 20));
    const start = Math.max(0, Number(c.req.query('cursor') ?? 0) || 0);
    const page = await registry.list(cwd, { start, size });
    return c.json({ sessions: page.rows.map((row) => listing(row, cwd)), ...(start + size < page.total ? { nextCursor: String(start + size) } : {}) });
  });

  // ---- turns --------------------------------------------------------------------------------

  app.post('/session/:id/prompt', async (c) => {
    const session = sessionOf(c, registry);
    const request = await body(c, PromptBodySchema);
    return c.json(await session.prompt(promptParts(request.prompt), clientIdOf(c)), 202);
  });

  app.post('/session/:id/continue', async (c) => {
    const session = sessionOf(c, registry);
    const request = await body(c, ContinueBodySchema);
    return c.json(await session.continue(request.planId, clientIdOf(c)));
  });

  app.post('/session/:id/cancel', async (c) => {
    const session = sessionOf(c, registry);
    await body(c, EmptyBodySchema);
    return c.json({ cancelled: session.cancel() });
  });

  const permission = async (c: Context, session: DaemonSession | undefined) => {
    const request = await body(c, PermissionBodySchema);
    const requestId = c.req.param('requestId') ?? '';
    return session?.answerPermission(requestId, request)
      ? c.json({ accepted: true }, 200)
      : errorAnswer(c, new MendError('not_found', `no permission request ${requestId} is waiting (answered already, or never asked)`), log);
  };
  app.post('/session/:id/permission/:requestId', async (c) => permission(c, sessionOf(c, registry)));
  // Qwen's session-less variant: whichever open session asked.
  app.post('/permission/:requestId', async (c) =>
    permission(
      c,
      registry.all().find((s) => s.hasPermissionRequest(c.req.param('requestId'))),
    ),
  );

  app.post('/session/:id/heartbeat', async (c) => {
    const session = sessionOf(c, registry);
    await body(c, EmptyBodySchema);
    return c.json(session.heartbeat(clientIdOf(c)));
  });

  app.post('/session/:id/model', async (c) => {
    const session = sessionOf(c, registry);
    const { modelId } = await body(c, ModelBodySchema);
    session.setModel(modelId);
    return c.json({ sessionId: session.sessionId, modelId });
  });

  app.post('/session/:id/approval-mode', async (c) => {
    const session = sessionOf(c, registry);
    const request = await body(c, ApprovalModeBodySchema);
    const previous = session.runtime.settings.approvalMode;
    const mode = approvalModeOf(request.mode, previous);
    // Answered once the change is recorded (a record that fails is a warning on the session, not an error here).
    await session.runtime.setApprovalMode(mode);
    return c.json({ sessionId: session.sessionId, mode, previous, persisted: false });
  });

  // ---- events -------------------------------------------------------------------------------

  app.get('/session/:id/events', (c) => {
    const session = sessionOf(c, registry);
    const { journal } = session;
    const epoch = c.req.header(EVENT_EPOCH_HEADER);
    const requested = parseLastEventId(c.req.header('last-event-id'));
    // An id from another epoch (another daemon, or an earlier open of the session) means nothing here.
    const epochReset = requested !== undefined && epoch !== undefined && epoch !== journal.epoch;
    const afterId = epochReset ? undefined : requested;
    const maxQueued = Math.max(1, Math.min(limits.maxQueuedEvents, Number(c.req.query('maxQueued') ?? limits.maxQueuedEvents) || limits.maxQueuedEvents));
    c.header(EVENT_EPOCH_HEADER, journal.epoch);
    c.header(SSE_STREAM_ID_HEADER, randomUUID());
    const run = async (stream: SseSink): Promise<void> => {
      const { subscriber, replayed, complete } = journal.subscribe(afterId, maxQueued);
      stream.onAbort(() => subscriber.end());
      const heartbeat = setInterval(() => void comment(stream, 'heartbeat').catch(() => subscriber.end()), limits.heartbeatMs);
      try {
        await retry(stream, limits.sseRetryMs);
        if (epochReset || !complete) {
          await stream.write(
            sseFrame({
              event: 'state_resync_required',
              data: JSON.stringify({
                v: 1,
                type: 'state_resync_required',
                data: { sessionId: session.sessionId, reason: epochReset ? 'epoch_reset' : 'journal_truncated', lastEventId: journal.lastId },
              }),
            }),
          );
        }
        let sent = 0;
        let lastReplayed = afterId ?? 0;
        if (afterId !== undefined && replayed === 0) await replayComplete(stream, 0, lastReplayed);
        // Every event that is ready goes out in one write (a burst was a write each).
        for (let entry = await subscriber.next(); entry !== null && !stream.aborted; entry = await subscriber.next()) {
          let frames = '';
          for (const ready of [entry, ...subscriber.takeQueued()]) {
            frames += sseFrame({ id: String(ready.id), event: ready.type, data: ready.json });
            sent += 1;
            if (sent === replayed) {
              lastReplayed = ready.id;
              frames += replayCompleteFrame(replayed, lastReplayed);
            }
          }
          await stream.write(frames);
        }
        if (subscriber.evicted && !stream.aborted) {
          log(`session ${session.sessionId}: an event stream fell ${maxQueued} events behind and was closed`);
          await stream.write(
            sseFrame({
              event: 'client_evicted',
              data: JSON.stringify({ v: 1, type: 'client_evicted', data: { sessionId: session.sessionId, reason: 'queue_full', lastEventId: journal.lastId } }),
            }),
          );
        }
      } finally {
        clearInterval(heartbeat);
        subscriber.end();
      }
    };
    return sseResponse(c, deps.sseDirect ?? true, run, (error) =>
      log(`session ${session.sessionId}: event stream failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  });

  return app;
}

// Two frames without an event: a comment (keeps idle connections open) and a bare retry.
function comment(stream: SseSink, text: string): Promise<void> {
  return stream.write(`: ${text}\n\n`).then(() => undefined);
}

function retry(stream: SseSink, ms: number): Promise<void> {
  return stream.write(`retry: ${ms}\n\n`).then(() => undefined);
}

function replayComplete(stream: SseSink, replayedCount: number, lastReplayedEventId: number): Promise<void> {
  return stream.write(replayCompleteFrame(replayedCount, lastReplayedEventId)).then(() => undefined);
}

function replayCompleteFrame(replayedCount: number, lastReplayedEventId: number): string {
  return sseFrame({ event: 'replay_complete', data: JSON.stringify({ v: 1, type: 'replay_complete', data: { replayedCount, lastReplayedEventId } }) });
}
