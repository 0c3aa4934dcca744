/**
 * An interrupt while an MCP call runs: the request is cancelled at the server
 * (`notifications/cancelled`, which the fixture server records), the call ends with an error
 * result, the turn ends and the run goes on. The built mend, the fixture stdio server.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, makeSandbox, parseStreamJson, spawnMend, waitFor, watchStdout, writeScript } from '../support/cli.js';
import { mcpConfigJson, readCallLog, readRecords, stdioConfig } from '../support/mcp.js';

afterAll(cleanupSandboxes);

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
type ToolResult = { type: string; tool_use_id: string; is_error?: boolean; content: string };

describe('interrupting an MCP call', () => {
  it('stream-json interrupt mid-call: notifications/cancelled reaches the server, the call ends with an error result, the turn ends, the next one runs', async () => {
    const sb = makeSandbox('mcp-interrupt');
    const calls = join(sb.scratch, 'calls.log');
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'call_slow', name: 'mcp__fx__slow', args: { ms: 600_000 } }] },
      { toolCalls: [{ id: 'call_echo', name: 'mcp__fx__echo', args: { text: 'again' } }] },
      { text: 'second turn done' },
    ]);
    const config = mcpConfigJson({ fx: stdioConfig('fx', calls) });
    const sub = spawnMend(
      sb,
      ['--input-format', 'stream-json', '--output-format', 'stream-json', '--mcp-config', config, '--scripted-responses', script, '--approval-mode', 'yolo'],
      { stdin: 'pipe', timeout: 60_000 },
    );
    const out = watchStdout(sub);
    sub.stdin!.write(line({ type: 'control_request', request_id: 'init_1', request: { subtype: 'initialize' } }));
    sub.stdin!.write(line({ type: 'user', message: { role: 'user', content: 'go slow' } }));
    await waitFor(() => readCallLog(calls).some((c) => c.tool === 'slow'), 30_000, 'the slow call at the server');

    sub.stdin!.write(line({ type: 'control_request', request_id: 'int_1', request: { subtype: 'interrupt' } }));
    const answer = JSON.parse(await out.waitFor((l) => l.includes('"request_id":"int_1"'), 30_000)) as { response: Record<string, unknown> };
    expect(answer.response).toMatchObject({ subtype: 'success', request_id: 'int_1', response: { interrupted: true } });
    await out.waitFor((l) => l.includes('"type":"result"'), 30_000);
    await waitFor(() => readCallLog(calls).some((c) => c.cancelled === 'slow'), 10_000, 'notifications/cancelled at the server');

    // The session goes on: the next turn runs the server's tools (it was not stopped by the interrupt).
    sub.stdin!.write(line({ type: 'user', message: { role: 'user', content: 'once more' } }));
    await waitFor(() => readCallLog(calls).some((c) => c.tool === 'echo'), 30_000, 'the echo call of the next turn');
    sub.stdin!.end();
    const run = await sub;
    expect(run.exitCode).toBe(0);

    const messages = parseStreamJson(
      String(run.stdout)
        .split('\n')
        .filter((l) => !l.includes('"type":"control_'))
        .join('\n'),
    );
    const results = messages.filter((m) => m.type === 'result') as { subtype: string; is_error?: boolean; result?: string }[];
    expect(results).toHaveLength(2);
    expect(results[0]!.subtype).not.toBe('success');
    expect(results[1]).toMatchObject({ subtype: 'success', result: 'second turn done' });
    const toolResults = messages
      .filter((m) => m.type === 'user')
      .flatMap((m) => (m as { message: { content: ToolResult[] | string } }).message.content as ToolResult[])
      .filter((b) => typeof b === 'object' && b.type === 'tool_result');
    const slow = toolResults.filter((r) => r.tool_use_id === 'call_slow');
    expect(slow).toHaveLength(1);
    expect(slow[0]).toMatchObject({ is_error: true });
    expect(slow[0]!.content).toContain('MCP call to fx/slow was cancelled');
    expect(results[0]).toMatchObject({ is_error: true, error: { code: 'aborted' } });
    expect(toolResults.find((r) => r.tool_use_id === 'call_echo')).toMatchObject({ content: 'echo: again' });
    // One call of each reached the server: the interrupted one was not sent again.
    expect(readCallLog(calls).filter((c) => c.tool === 'slow')).toHaveLength(1);
    // The same server process took both calls: the cancellation was a message to it, not its end.
    const log = readCallLog(calls);
    expect(log.find((c) => c.tool === 'echo')?.pid).toBe(log.find((c) => c.tool === 'slow')?.pid);
  }, 90_000);

  it('SIGINT of a text-mode run mid-call: the server sees the cancellation, the turn is recorded as aborted, mend exits 130 without hanging', async () => {
    const sb = makeSandbox('mcp-sigint');
    const calls = join(sb.scratch, 'calls.log');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'call_slow', name: 'mcp__fx__slow', args: { ms: 600_000 } }] }]);
    const config = mcpConfigJson({ fx: stdioConfig('fx', calls) });
    const sub = spawnMend(sb, ['-p', 'go slow', '--mcp-config', config, '--scripted-responses', script, '--approval-mode', 'yolo'], { timeout: 60_000 });
    await waitFor(() => readCallLog(calls).some((c) => c.tool === 'slow'), 30_000, 'the slow call at the server');
    sub.kill('SIGINT');
    const run = await sub;
    expect(run.exitCode).toBe(130);
    await waitFor(() => readCallLog(calls).some((c) => c.cancelled === 'slow'), 10_000, 'the cancellation at the server');
    const records = readRecords(sb);
    const result = records.find((r) => r.type === 'tool_result');
    expect(JSON.stringify(result)).toContain('MCP call to fx/slow was cancelled');
    expect(records.at(-1)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'sigint' } });
    expect(readCallLog(calls).filter((c) => c.tool === 'slow')).toHaveLength(1);
  }, 60_000);
});
