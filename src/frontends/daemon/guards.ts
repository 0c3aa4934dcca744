/**
 * The daemon's request guards, in the order they run: a closing server answers
 * 503; the Host header must name this server (a page on another origin cannot
 * reach it through DNS rebinding) and a browser's Origin must be the server's
 * own; a configured bearer token is compared in constant time; a request with a
 * body must say `application/json`; bodies are size-limited. CORS stays off: no
 * Access-Control-* header is ever sent, so browsers keep other origins out.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { MendError } from '../../errors.js';

/** Host names that mean this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function isWildcard(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === '0.0.0.0' || h === '::';
}

/** `host:port` as it appears in a Host header or a URL (IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  const h = host.replace(/^\[|\]$/g, '');
  return `${isIP(h) === 6 ? `[${h}]` : h}:${port}`;
}

export interface GuardConfig {
  /** The address the server is bound to. */
  host: string;
  /** The bound port (known once listening). */
  port: () => number;
  token: string | undefined;
  maxBodyBytes: number;
  closing: () => boolean;
}

/**
 * Host values accepted: the bound host with the port; when bound to loopback or
 * to every interface, the loopback names too; bound to every interface, any IP
 * literal with the port (a token is then required anyway).
 */
export function hostAllowed(header: string | undefined, config: Pick<GuardConfig, 'host' | 'port'>): boolean {
  if (!header) return false;
  const port = config.port();
  const value = header.toLowerCase();
  const suffix = `:${port}`;
  if (!value.endsWith(suffix)) return false;
  const name = value.slice(0, -suffix.length);
  if (hostPort(config.host, port).toLowerCase() === value) return true;
  if ((isLoopbackHost(config.host) || isWildcard(config.host)) && isLoopbackHost(name)) return true;
  return isWildcard(config.host) && isIP(name.replace(/^\[|\]$/g, '')) !== 0;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time comparison: both sides are hashed to the same length first. */
export function tokenMatches(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

export function guards(config: GuardConfig): MiddlewareHandler[] {
  const closing: MiddlewareHandler = async (_c, next) => {
    if (config.closing()) throw new MendError('server_closing', 'the daemon is shutting down');
    await next();
  };
  const origin: MiddlewareHandler = async (c, next) => {
    const host = c.req.header('host');
    if (!hostAllowed(host, config)) throw new MendError('forbidden_host', `Host ${JSON.stringify(host ?? '')} does not name this server`);
    const from = c.req.header('origin');
    if (from !== undefined && from !== `http://${host}`) throw new MendError('forbidden_host', `requests from origin ${JSON.stringify(from)} are not accepted`);
    await next();
  };
  const auth: MiddlewareHandler = async (c, next) => {
    if (config.token !== undefined) {
      const header = c.req.header('authorization') ?? '';
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match || !tokenMatches(match[1]!, config.token)) {
        c.header('WWW-Authenticate', 'Bearer');
        throw new MendError('unauthorized', 'a valid bearer token is required');
      }
    }
    await next();
  };
  const json: MiddlewareHandler = async (c, next) => {
    const length = c.req.header('content-length');
    const hasBody = (length !== undefined && length !== '0') || c.req.header('transfer-encoding') !== undefined;
    if (hasBody) {
      const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') throw new MendError('unsupported_media_type', 'a request body must be application/json');
    }
    await next();
  };
  const tooLarge = (): never => {
    throw new MendError('payload_too_large', `request bodies are limited to ${config.maxBodyBytes} bytes`);
  };
  const streamedLimit = bodyLimit({ maxSize: config.maxBodyBytes, onError: tooLarge });
  // hono's bodyLimit asks the request for its body first, and on node that builds a whole
  // fetch Request (a fifth of a busy daemon's request handling). Without Transfer-Encoding a
  // request's body is its declared length, or none when it declares none (a GET, a DELETE:
  // RFC 9112 6.3); one within the limit passes, as it would through bodyLimit. Anything else
  // (a length over the limit, a streamed body) goes through bodyLimit itself.
  const limit: MiddlewareHandler = async (c, next) => {
    if (c.req.header('transfer-encoding') === undefined && parseInt(c.req.header('content-length') || '0', 10) <= config.maxBodyBytes) return next();
    return streamedLimit(c, next);
  };
  return [closing, origin, auth, json, limit];
}
