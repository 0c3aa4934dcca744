/**
 * The environment tools run with, and the redaction of secret values from what they
 * return. A prompt-injected model can run `env` or `echo $OPENAI_API_KEY`; whatever the
 * command prints is logged and sent to the provider, so credentials must not be in the
 * tool's environment in the first place, and any that still surface are redacted.
 */
import { z } from 'zod';

/**
 * - `scrub` (default): everything except mend's credentials and secret-named variables;
 * - `inherit`: everything except mend's credentials;
 * - `{allow}`: only the listed variables plus a few a shell needs to work.
 */
export type ToolEnvPolicy = 'inherit' | 'scrub' | { allow: string[] };

export const DEFAULT_TOOL_ENV_POLICY: ToolEnvPolicy = 'scrub';

/** Always passed under `allow:`: without them most commands misbehave in confusing ways. */
export const BASE_ALLOWED_VARIABLES: readonly string[] = ['PATH', 'HOME', 'LANG', 'TERM', 'USER', 'SHELL', 'TMPDIR'];

/** `*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, in any case. */
const SECRET_NAME = /(_KEY|_TOKEN|_SECRET)$|PASSWORD/i;

/** Values shorter than this are not redacted: they would shred ordinary words. */
export const MIN_SECRET_LENGTH = 8;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

const VariableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'not a variable name');

/** Parses the CLI syntax `inherit | scrub | allow:A,B`; an error is a value, for a usage error. */
export function parseToolEnvPolicy(text: string): { ok: true; policy: ToolEnvPolicy } | { ok: false; error: string } {
  if (text === 'inherit' || text === 'scrub') return { ok: true, policy: text };
  if (text.startsWith('allow:')) {
    const names = text
      .slice('allow:'.length)
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name.length > 0);
    const parsed = z.array(VariableName).safeParse(names);
    if (!parsed.success) return { ok: false, error: `--tool-env allow: list has an invalid name: ${text}` };
    return { ok: true, policy: { allow: parsed.data } };
  }
  return { ok: false, error: `--tool-env must be inherit, scrub or allow:NAME,NAME (got ${JSON.stringify(text)})` };
}

/** Pure: the parent environment is not modified. Credentials never pass, whatever the policy. */
export function toolEnvironment(
  parentEnv: Readonly<Record<string, string | undefined>>,
  policy: ToolEnvPolicy,
  credentialNames: readonly string[],
): Record<string, string> {
  const credentials = new Set(credentialNames);
  const allowed = typeof policy === 'object' ? new Set([...BASE_ALLOWED_VARIABLES, ...policy.allow]) : undefined;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parentEnv)) {
    if (value === undefined || credentials.has(name)) continue;
    if (allowed) {
      if (!allowed.has(name)) continue;
    } else if (policy === 'scrub' && isSecretName(name)) {
      continue;
    }
    env[name] = value;
  }
  return env;
}

/**
 * The values to redact from tool results: mend's credentials and every secret-named
 * variable of the parent environment, whether or not the policy passed it on (a file or
 * a command can reveal a value without the variable).
 */
export function secretValues(parentEnv: Readonly<Record<string, string | undefined>>, credentialNames: readonly string[]): string[] {
  const credentials = new Set(credentialNames);
  const values = new Set<string>();
  for (const [name, value] of Object.entries(parentEnv)) {
    if (value === undefined || value.length < MIN_SECRET_LENGTH) continue;
    if (credentials.has(name) || isSecretName(name)) values.add(value);
  }
  return [...values];
}

/** Replaces every occurrence of each secret (length >= 8) with `[redacted]`; longest first, so no fragment survives. */
export function redactSecretValues(text: string, secrets: readonly string[]): string {
  let out = text;
  const ordered = [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  for (const secret of ordered) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}
