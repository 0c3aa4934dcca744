/**
 * Session ids and project keys: what every store and the runtime agree on,
 * whatever the storage. A session id is a UUID (it becomes a file name, a key);
 * a project is keyed by its root path with every character outside [a-zA-Z0-9]
 * made '-' (Qwen Code's folder name under `projects/`, the PostgreSQL store's
 * project column).
 */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isSessionId(value: string): boolean {
  return UUID_RE.test(value);
}

/** `/home/u/repo` -> `-home-u-repo`. */
export function projectKey(projectRoot: string): string {
  return projectRoot.replace(/[^a-zA-Z0-9]/g, '-');
}

/**
 * A session id's one spelling: lower case. A UUID names the same session whatever its
 * case, so every store keys sessions (files, rows, locks) by this form, never by the
 * spelling a caller typed: otherwise `ABC…` and `abc…` would be two sessions, each
 * with its own lock.
 */
export function canonicalSessionId(value: string): string {
  return isSessionId(value) ? value.toLowerCase() : value;
}
