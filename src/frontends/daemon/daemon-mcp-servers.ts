/**
 * The `mcpServers` a daemon request carries (`POST /session`, `/load`, `/resume`): `{name:
 * entry}` in the settings file's shape, read by the one reader (mcp-config.ts). Unlike a
 * settings file, whose bad entry is a server listed failed, a request's bad entry refuses
 * the request (400 `invalid_mcp_config`, naming the server): the client is there to fix it.
 */
import { MendError } from '../../errors.js';
import { serverSpecOf, type McpServerSpec } from '../../tools/mcp/mcp-config.js';

export function requestServerSpecs(servers: Record<string, unknown> | undefined): McpServerSpec[] {
  return Object.entries(servers ?? {}).map(([name, raw]) => {
    const result = serverSpecOf(name, raw);
    if (!result.ok) throw new MendError('invalid_mcp_config', `mcpServers.${name}: ${result.error}`, { server: name });
    if (result.spec.transport.kind === 'sdk') {
      throw new MendError(
        'invalid_mcp_config',
        `mcpServers.${name}: an sdk server lives inside a stream-json host (initialize); over the daemon give a stdio, http or sse server`,
        { server: name },
      );
    }
    return result.spec;
  });
}
