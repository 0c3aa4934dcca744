/**
 * Error text from an API or a proxy can echo the credentials it received. Everything a
 * provider puts into a MendError message goes through here first.
 */
const BEARER = /\b(Bearer)\s+[^\s"',;]+/gi;
// OpenAI-style keys (sk-..., sk-proj-...) even when the key in use is a different one.
const KEY_LIKE = /\bsk-[A-Za-z0-9_-]{4,}/g;
const MAX_LENGTH = 500;

export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    // Very short "secrets" would shred ordinary words; real keys are long.
    if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  out = out.replace(BEARER, '$1 [redacted]').replace(KEY_LIKE, 'sk-[redacted]');
  // Proxies answer errors with whole HTML pages; the head is enough to diagnose.
  return out.length > MAX_LENGTH ? `${out.slice(0, MAX_LENGTH)}…` : out;
}
