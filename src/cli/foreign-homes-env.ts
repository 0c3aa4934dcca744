/** The other agents' homes from the environment, the way each agent reads them (src/foreign/homes.ts). */
import { join } from 'node:path';
import type { ForeignHomes } from '../foreign/homes.js';

export function foreignHomesFromEnv(env: Record<string, string | undefined>, home: string): ForeignHomes {
  return {
    claude: env['CLAUDE_CONFIG_DIR'] || join(home, '.claude'),
    codex: env['CODEX_HOME'] || join(home, '.codex'),
    gemini: join(env['GEMINI_CLI_HOME'] || home, '.gemini'),
  };
}
