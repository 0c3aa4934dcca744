/**
 * The session-wide part of a ToolContext, computed once at start-up from the CLI's
 * options, so the CLI and the stream-json server build it the same way.
 */
import type { ToolContext } from './tool.js';
import { secretValues, toolEnvironment, type ToolEnvPolicy } from './tool-env.js';

export interface ToolSessionOptions {
  projectRoot: string;
  /** --add-dir / --include-directories, absolute or relative to the project root. */
  addDirs: readonly string[];
  policy: ToolEnvPolicy;
  /** Usually process.env as it was at start-up, before credentials were removed from it. */
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** Names of the variables mend read its own credentials from (e.g. OPENAI_API_KEY). */
  credentialNames: readonly string[];
  /** Credential values that did not come from the environment (a --api-key flag, a config file). */
  extraSecrets?: readonly string[];
}

export type ToolSessionContext = Required<Pick<ToolContext, 'projectRoot' | 'roots' | 'env' | 'secrets'>> & Pick<ToolContext, 'runShell'>;

export function toolSessionContext(options: ToolSessionOptions): ToolSessionContext {
  return {
    projectRoot: options.projectRoot,
    roots: [...options.addDirs],
    env: toolEnvironment(options.parentEnv, options.policy, options.credentialNames),
    secrets: [...new Set([...secretValues(options.parentEnv, options.credentialNames), ...(options.extraSecrets ?? [])])],
  };
}
