/** Config shapes, names and the recovery answer of MCP calls: the pure parts, in process. */
import { describe, expect, it } from 'vitest';
import { decideApproval } from '../../src/tools/approval.js';
import { mergeServerSpecs, parseMcpConfigText, serverSpecOf } from '../../src/tools/mcp/mcp-config.js';
import { mcpOutcome } from '../../src/tools/mcp/mcp-result.js';
import { SYNTHETIC_RESULT_REASON, syntheticResultPart } from '../../src/recovery/synthetic-result.js';
import { mcpRuleMatches, mcpToolName, parseMcpToolName } from '../../src/wire/mcp-names.js';

describe('MCP config shapes', () => {
  it("reads Claude Code's and Qwen Code's entries into one spec", () => {
    expect(serverSpecOf('a', { command: 'node', args: ['s.js'], env: { K: 'v' } })).toMatchObject({
      ok: true,
      spec: { name: 'a', transport: { kind: 'stdio', command: 'node', args: ['s.js'], env: { K: 'v' } } },
    });
    expect(serverSpecOf('h', { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { A: 'b' } })).toMatchObject({
      ok: true,
      spec: { transport: { kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: { A: 'b' } } },
    });
    expect(serverSpecOf('s', { type: 'sse', url: 'http://127.0.0.1:1/sse' })).toMatchObject({ ok: true, spec: { transport: { kind: 'sse' } } });
    // Qwen: httpUrl is Streamable HTTP, url alone is SSE; timeout and the tool filters are kept.
    expect(serverSpecOf('q', { httpUrl: 'https://x.test/mcp', timeout: 5000, includeTools: ['t'], trust: true })).toMatchObject({
      ok: true,
      spec: { transport: { kind: 'http', url: 'https://x.test/mcp' }, timeoutMs: 5000, includeTools: ['t'] },
    });
    expect(serverSpecOf('q2', { url: 'https://x.test/sse' })).toMatchObject({ ok: true, spec: { transport: { kind: 'sse' } } });
    expect(serverSpecOf('k', { type: 'sdk', name: 'k' })).toMatchObject({ ok: true, spec: { transport: { kind: 'sdk' } } });
  });

  it('says what is wrong with an entry, a name or a file, as values', () => {
    expect(serverSpecOf('a', {})).toEqual({ ok: false, name: 'a', error: 'a stdio server needs a "command"' });
    expect(serverSpecOf('a', { type: 'http', url: 'ftp://x' })).toMatchObject({ ok: false, error: expect.stringMatching(/http\(s\) "url"/) });
    expect(serverSpecOf('a', { type: 'ws', url: 'http://x' })).toMatchObject({ ok: false, error: expect.stringMatching(/unknown server type/) });
    expect(serverSpecOf('a__b', { command: 'x' })).toMatchObject({ ok: false, error: expect.stringMatching(/without "__"/) });
    expect(serverSpecOf('a', { command: 'x', args: 'nope' })).toMatchObject({ ok: false, error: expect.stringMatching(/args/) });
    expect(parseMcpConfigText('{', 'f')).toMatchObject({ ok: false, error: expect.stringMatching(/not JSON/) });
    expect(parseMcpConfigText('{"servers":{}}', 'f')).toMatchObject({ ok: false, error: expect.stringMatching(/mcpServers/) });
    const parsed = parseMcpConfigText('{"mcpServers":{"a":{"command":"x"},"b":{}}}', 'f');
    expect(parsed.ok && parsed.results.map((r) => r.ok)).toEqual([true, false]);
  });

  it('later sources win by name; the allowed names filter', () => {
    const a1 = { name: 'a', transport: { kind: 'sdk' as const } };
    const a2 = { name: 'a', transport: { kind: 'stdio' as const, command: 'y', args: [], env: {} } };
    const b = { name: 'b', transport: { kind: 'sdk' as const } };
    expect(mergeServerSpecs([[a1, b], [a2]])).toEqual([a2, b]);
    expect(mergeServerSpecs([[a1, b], [a2]], ['b'])).toEqual([b]);
  });
});

describe('MCP names and approval', () => {
  it('names tools mcp__server__tool and reads them back', () => {
    expect(mcpToolName('my.server', 'do it')).toBe('mcp__my_server__do_it');
    expect(parseMcpToolName('mcp__fx__get__thing')).toEqual({ server: 'fx', tool: 'get__thing' });
    expect(parseMcpToolName('read_file')).toBeUndefined();
    expect(parseMcpToolName('mcp__fx')).toBeUndefined();
    expect(['mcp__fx__echo', 'mcp__fx', 'mcp__fx__*'].map((r) => mcpRuleMatches(r, 'fx', 'mcp__fx__echo'))).toEqual([true, true, true]);
    expect(mcpRuleMatches('mcp__fy', 'fx', 'mcp__fx__echo')).toBe(false);
  });

  it('plan runs only read-only MCP tools; default asks even for them; rules and yolo allow', () => {
    const tool = (readOnly: boolean) => ({
      name: 'mcp__fx__t',
      kind: readOnly ? ('read' as const) : ('execute' as const),
      mcp: { server: 'fx', tool: 't', readOnly },
    });
    expect(decideApproval(tool(true), 'plan')).toBe('allow');
    expect(decideApproval(tool(false), 'plan')).toBe('deny');
    expect(decideApproval(tool(false), 'plan', ['mcp__fx'])).toBe('deny');
    expect(decideApproval(tool(true), 'default')).toBe('ask');
    expect(decideApproval(tool(false), 'auto-edit')).toBe('ask');
    expect(decideApproval(tool(false), 'default', ['mcp__fx__t'])).toBe('allow');
    expect(decideApproval(tool(false), 'yolo')).toBe('allow');
  });
});

describe('MCP results and recovery', () => {
  it('records text, images, structured content and isError; the model reads text', () => {
    const outcome = mcpOutcome(
      {
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
        structuredContent: { n: 1 },
        isError: true,
      },
      1000,
      { server: 's', tool: 't' },
    );
    expect(outcome).toMatchObject({ output: 'hi\n[image image/png, 3 bytes]', isError: true });
    expect(outcome.details).toEqual({
      mcp: {
        server: 's',
        tool: 't',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
        structuredContent: { n: 1 },
        isError: true,
      },
    });
    expect(mcpOutcome({ content: [], structuredContent: { n: 1 } }, 1000, { server: 's', tool: 't' }).output).toBe('{"n":1}');
  });

  it('a dangling MCP call is answered "outcome unknown" naming its server; other tools keep the plain answer', () => {
    const mcp = syntheticResultPart('c1', 'mcp__payments__refund').functionResponse!.response['error'] as string;
    expect(mcp.startsWith(SYNTHETIC_RESULT_REASON)).toBe(true);
    expect(mcp).toContain('MCP server "payments"');
    expect(mcp).toContain('tool "refund"');
    expect(syntheticResultPart('c2', 'run_shell_command').functionResponse!.response['error']).toBe(SYNTHETIC_RESULT_REASON);
  });
});
