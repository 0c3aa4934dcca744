/**
 * An MCP `tools/call` result as a tool outcome: the text the model reads (text blocks as
 * they are, other blocks described, structured content as JSON when there is no text), and
 * the whole result recorded beside it (content blocks with their images, structured content,
 * isError), so the log keeps what the server answered.
 */
import { z } from 'zod';
import { OutputCapper } from '../output-cap.js';
import type { ToolOutcome } from '../tool.js';

const Block = z.looseObject({ type: z.string() });
export const McpCallResultSchema = z.looseObject({
  content: z.array(Block).optional(),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
  /** Protocol 2024-10-07 servers answer `toolResult` instead. */
  toolResult: z.unknown().optional(),
});

/** Binary payloads kept in the record up to this many base64 characters in all; beyond, a placeholder. */
const MAX_RECORDED_BINARY = 512 * 1024;

function describe(block: Record<string, unknown>): string {
  const type = String(block['type']);
  if (type === 'text' && typeof block['text'] === 'string') return block['text'];
  if (type === 'image' || type === 'audio') {
    const data = typeof block['data'] === 'string' ? block['data'] : '';
    return `[${type} ${String(block['mimeType'] ?? 'unknown type')}, ${Math.floor((data.length * 3) / 4)} bytes]`;
  }
  if (type === 'resource') {
    const resource = (block['resource'] ?? {}) as Record<string, unknown>;
    if (typeof resource['text'] === 'string') return resource['text'];
    return `[resource ${String(resource['uri'] ?? '')}${resource['mimeType'] ? ` (${String(resource['mimeType'])})` : ''}]`;
  }
  if (type === 'resource_link') return `[resource link ${String(block['uri'] ?? '')}${block['name'] ? ` (${String(block['name'])})` : ''}]`;
  return `[${type} content]`;
}

/** Images and blobs past the budget are recorded without their data. */
function recordable(blocks: Record<string, unknown>[]): Record<string, unknown>[] {
  let budget = MAX_RECORDED_BINARY;
  return blocks.map((block) => {
    const data = block['data'];
    if (typeof data !== 'string') return block;
    if (data.length <= budget) {
      budget -= data.length;
      return block;
    }
    const { data: _dropped, ...rest } = block;
    return { ...rest, dataOmitted: `${data.length} base64 characters not recorded (over the record budget)` };
  });
}

export function mcpOutcome(raw: unknown, outputCap: number, origin: { server: string; tool: string }): ToolOutcome {
  const parsed = McpCallResultSchema.safeParse(raw);
  if (!parsed.success)
    return { output: `MCP server ${origin.server} answered ${origin.tool} with a malformed result`, isError: true, errorType: 'mcp_tool_error' };
  const result = parsed.data;
  const blocks = (result.content ?? []) as Record<string, unknown>[];
  let text = blocks.map(describe).join('\n');
  if (text === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (text === '' && result.toolResult !== undefined) text = typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult);
  const capper = new OutputCapper(outputCap);
  capper.push(text);
  const output = capper.text();
  const isError = result.isError === true;
  return {
    output: output === '' ? (isError ? `${origin.tool} failed (no details from the server)` : '(no output)') : output,
    isError,
    ...(isError ? { errorType: 'mcp_tool_error' } : {}),
    details: {
      mcp: {
        server: origin.server,
        tool: origin.tool,
        content: recordable(blocks),
        ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
        isError,
      },
    },
  };
}
