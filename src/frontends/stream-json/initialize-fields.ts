/**
 * What an `initialize` request changes and what its answer says beyond mend's own fields,
 * for hosts on Claude's SDK (docs/compat-claude.md): the system prompt and disallowed tools
 * it carries are honoured; the answer lists what that SDK reads (commands, models, agents,
 * account, output style) and says the MCP servers it carried were applied (started).
 */
import { MendError } from '../../errors.js';
import type { SessionRuntime } from '../../runtime/session-runtime.js';
import type { InitializeRequestSchema } from '../../wire/control.js';
import { toMendToolRule } from '../../wire/tool-aliases.js';
import type { z } from 'zod';
import type { McpMessageChannel } from '../../tools/mcp/control-channel-transport.js';
import { serverSpecOf, serverSpecsOf, type SpecResult } from '../../tools/mcp/mcp-config.js';

type InitializeRequest = z.infer<typeof InitializeRequestSchema>;

/**
 * Claude's SDK sends `systemPrompt: [""]` when its host set none and the parts of a prompt
 * as an array: an empty prompt means "nothing set", so mend keeps its built-in one (which
 * tells the model about mend's tools and the project) rather than sending no instructions.
 */
function systemPromptOf(value: InitializeRequest['systemPrompt']): string | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join('\n\n') : value;
  return text.trim() === '' ? undefined : text;
}

/**
 * The servers an initialize brings: `mcpServers` (entries of any shape mcp-config.ts reads;
 * `type: "sdk"` ones live in the host) and `sdkMcpServers` (Claude: names; Qwen: `{name: {type: "sdk"}}`).
 * Entries that make no sense are listed as failed; the rest start now.
 */
export function applyInitializeServers(runtime: SessionRuntime, request: InitializeRequest, channel: McpMessageChannel): boolean {
  const results: SpecResult[] = serverSpecsOf(request.mcpServers ?? {});
  const sdk = request.sdkMcpServers;
  const sdkNames = sdk === undefined ? [] : Array.isArray(sdk) ? sdk : Object.keys(sdk);
  for (const name of sdkNames) results.push(serverSpecOf(name, { type: 'sdk' }));
  const specs = results.flatMap((r) => (r.ok ? [r.spec] : []));
  for (const r of results) if (!r.ok) runtime.addFailedMcpServer(r.name, r.error);
  if (specs.length > 0) runtime.addMcpServers(specs, channel);
  return results.length > 0;
}

export function applyInitialize(runtime: SessionRuntime, request: InitializeRequest): void {
  const rules = (request.disallowedTools ?? []).map((entry) => {
    const rule = toMendToolRule(entry);
    if (!rule.ok) throw new MendError('invalid_request', `disallowedTools: ${rule.error}`);
    return rule.rule;
  });
  runtime.setSystemPrompt({
    replace: systemPromptOf(request.systemPrompt),
    append: request.appendSystemPrompt?.trim() ? request.appendSystemPrompt : undefined,
  });
  if (rules.length > 0) runtime.excludeTools(rules);
}

export function claudeInitializeFields(model: string | null, request: InitializeRequest): Record<string, unknown> {
  return {
    // Slash commands are the terminal UI's; a stream-json host has none to call.
    commands: [],
    models: model ? [{ value: model, displayName: model, description: 'the configured model (OpenAI-compatible or scripted)' }] : [],
    agents: [],
    account: {},
    output_style: 'default',
    available_output_styles: ['default'],
    ...(request.mcpServers !== undefined || request.sdkMcpServers !== undefined ? { mcp_servers_applied: true } : {}),
    ...(request.disallowedTools !== undefined ? { disallowed_tools_applied: true } : {}),
  };
}
