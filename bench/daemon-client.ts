/**
 * The daemon load bench's client: the REST + SSE calls of Qwen's daemon API (which
 * `mend serve` speaks too) on plain `node:http`, with as little work per event as
 * possible, so that at 1,000 sessions the client's own event loop does not decide
 * the figures. One `SessionDriver` per session: create, subscribe, two prompts one
 * after the other, close; each prompt timed from the moment its request is sent.
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * Connections, as the daemon's real clients use them: fetch (undici) in mend's SDK and
 * Qwen's keeps them alive, so a session's calls reuse one socket. A kept-alive socket is
 * given up by the client a second before the server's `Keep-Alive: timeout=N` hint (node's
 * Agent reads it), so the client never reuses one the server is closing. `fresh` (the
 * bench's --fresh-connections) opens a connection per call instead: the worst case for a
 * busy daemon, whose loop accepts one connection per iteration (libuv 1.45+).
 */
const agents = { kept: new Agent({ keepAlive: true, maxSockets: Infinity }), fresh: new Agent({ keepAlive: false, maxSockets: Infinity }) };
export type ConnectionMode = keyof typeof agents;

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export function call(
  base: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 120_000,
  connections: ConnectionMode = 'kept',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      new URL(path, base),
      {
        method,
        agent: agents[connections],
        headers: { ...headers, ...(text !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } : {}) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          let parsed: Record<string, unknown> = {};
          try {
            parsed = raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
          } catch {
            parsed = { raw };
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(text);
  });
}

export interface StreamEvent {
  type: string;
  /** performance.now() when the frame was parsed. */
  at: number;
  /** The frame's JSON as received (for checks on what a turn showed). */
  json: string;
  stopReason?: string;
}

/** An SSE subscription: frames parsed into events, each handed to `onEvent`. */
export function subscribe(
  base: string,
  path: string,
  headers: Record<string, string>,
  onEvent: (e: StreamEvent) => void,
): Promise<{ close: () => void; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { method: 'GET', agent: false, headers: { ...headers, accept: 'text/event-stream' } }, (res: IncomingMessage) => {
      if ((res.statusCode ?? 0) >= 300) {
        res.resume();
        reject(new Error(`GET ${path}: ${res.statusCode}`));
        return;
      }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const at = performance.now();
          for (const line of frame.split('\n')) {
            if (!line.startsWith('data:')) continue;
            const json = line.slice(5).trim();
            try {
              const parsed = JSON.parse(json) as { type?: unknown; data?: { stopReason?: unknown } };
              if (typeof parsed.type !== 'string') continue;
              const event: StreamEvent = { type: parsed.type, at, json };
              if (typeof parsed.data?.stopReason === 'string') event.stopReason = parsed.data.stopReason;
              onEvent(event);
            } catch {
              // Not an event frame.
            }
          }
        }
      });
      const ended = new Promise<void>((done) => {
        res.on('end', done);
        res.on('close', done);
        res.on('error', () => done());
      });
      resolve({ close: () => req.destroy(), ended });
    });
    req.on('error', reject);
    req.end();
  });
}

export interface TurnFigure {
  /** Prompt request sent -> first event of the turn on the stream (ms). */
  firstEventMs: number;
  /** Prompt request sent -> the turn's terminal event (ms). */
  endMs: number;
}

/** How long each of a session's other calls took (ms), to tell where a run's wall time went. */
export interface SessionPhases {
  /** POST /session sent -> answered. */
  createMs?: number;
  /** The event stream requested -> its headers arrived. */
  subscribeMs?: number;
  /** DELETE sent -> answered. */
  closeMs?: number;
}

export interface SessionOutcome {
  turns: TurnFigure[];
  phases: SessionPhases;
  errors: string[];
}

const TERMINAL = new Set(['turn_complete', 'turn_error']);

/**
 * One session: create (yolo), subscribe, `turns` prompts one after the other (turn 0
 * makes the model call the shell tool; the marker it prints must show on the stream),
 * then close. Every failure is counted, never thrown.
 */
export async function driveSession(
  base: string,
  opts: { cwd: string; index: number; turns: number; marker: string; turnTimeoutMs: number; connections: ConnectionMode },
): Promise<SessionOutcome> {
  const errors: string[] = [];
  const turns: TurnFigure[] = [];
  const phases: SessionPhases = {};
  let stream: { close: () => void; ended: Promise<void> } | undefined;
  try {
    let since0 = performance.now();
    const created = await call(base, 'POST', '/session', { cwd: opts.cwd, approvalMode: 'yolo' }, {}, 120_000, opts.connections);
    if (created.status >= 300) throw new Error(`POST /session: ${created.status} ${JSON.stringify(created.body).slice(0, 200)}`);
    const sessionId = String(created.body['sessionId']);
    const clientId = typeof created.body['clientId'] === 'string' ? created.body['clientId'] : undefined;
    const headers: Record<string, string> = clientId ? { 'x-qwen-client-id': clientId } : {};
    let since = Infinity;
    let first: number | null = null;
    let shown = '';
    let wake: ((e: StreamEvent) => void) | null = null;
    phases.createMs = performance.now() - since0;
    since0 = performance.now();
    stream = await subscribe(base, `/session/${sessionId}/events`, headers, (e) => {
      if (e.at < since || e.type === 'replay_complete') return;
      first ??= e.at;
      if (shown.length < 1 << 16) shown += e.json;
      if (TERMINAL.has(e.type)) wake?.(e);
    });
    phases.subscribeMs = performance.now() - since0;
    for (let turn = 0; turn < opts.turns; turn++) {
      first = null;
      shown = '';
      const terminal = new Promise<StreamEvent | null>((resolve) => {
        wake = resolve;
        setTimeout(() => resolve(null), opts.turnTimeoutMs).unref();
      });
      const started = performance.now();
      since = started;
      const text = `Session ${opts.index}, turn ${turn}: ${turn === 0 ? 'show me the marker' : 'thanks'}.`;
      const sent = await call(
        base,
        'POST',
        `/session/${sessionId}/prompt`,
        { prompt: [{ type: 'text', text }] },
        headers,
        opts.turnTimeoutMs,
        opts.connections,
      );
      if (sent.status !== 202 && sent.status >= 300) throw new Error(`prompt ${turn}: ${sent.status} ${JSON.stringify(sent.body).slice(0, 200)}`);
      const end = await terminal;
      wake = null;
      if (end === null) throw new Error(`turn ${turn}: no terminal event within ${opts.turnTimeoutMs} ms`);
      if (end.type !== 'turn_complete' || end.stopReason !== 'end_turn') errors.push(`turn ${turn}: ${end.json.slice(0, 300)}`);
      if (turn === 0 && !shown.includes(opts.marker)) errors.push(`turn 0: the tool's output (the marker) never showed on the stream`);
      turns.push({ firstEventMs: (first ?? end.at) - started, endMs: end.at - started });
    }
    // Qwen's daemon may answer 409 "retry later" while it archives a session: retried, as it asks.
    since0 = performance.now();
    let closed = await call(base, 'DELETE', `/session/${sessionId}`, undefined, headers, 120_000, opts.connections);
    for (let retry = 0; closed.status === 409 && retry < 20; retry++) {
      await new Promise((r) => setTimeout(r, 250));
      closed = await call(base, 'DELETE', `/session/${sessionId}`, undefined, headers, 120_000, opts.connections);
    }
    phases.closeMs = performance.now() - since0;
    if (closed.status >= 300 && closed.status !== 404) errors.push(`DELETE: ${closed.status} ${JSON.stringify(closed.body).slice(0, 200)}`);
  } catch (error) {
    errors.push((error as Error).message);
  } finally {
    stream?.close();
  }
  return { turns, phases, errors };
}
