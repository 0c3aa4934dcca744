/**
 * ACP prompt blocks become the same user parts through ACP's `session/prompt` and
 * the daemon's `POST /session/:id/prompt`: one conversion (prompt-parts.ts), each
 * block kind checked through both, as recorded in the session log.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { promptParts } from '../../../src/frontends/shared/prompt-parts.js';
import type { PromptBlock } from '../../../src/wire/prompt-blocks.js';
import { cleanupSandboxes, waitFor } from '../../support/cli.js';
import { inProcessDaemon, withInProcessAcp } from '../../support/in-process-hosts.js';
import { runtimeFixture, type RuntimeFixture } from '../../support/runtime.js';

afterAll(cleanupSandboxes);

const BLOCKS: Record<string, { block: PromptBlock; parts: unknown[] }> = {
  text: { block: { type: 'text', text: 'look at this' }, parts: [{ text: 'look at this' }] },
  resource_link: { block: { type: 'resource_link', name: 'a.ts', uri: 'file:///p/a.ts' }, parts: [{ text: '[a.ts](file:///p/a.ts)' }] },
  resource: {
    block: { type: 'resource', resource: { uri: 'file:///p/b.ts', text: 'const b = 1;' } },
    parts: [{ text: '<context uri="file:///p/b.ts">\nconst b = 1;\n</context>' }],
  },
  blob_resource: { block: { type: 'resource', resource: { uri: 'file:///p/c.bin', blob: 'AAAA' } }, parts: [{ text: '[binary resource](file:///p/c.bin)' }] },
  image: { block: { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }, parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] },
  audio: { block: { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' }, parts: [{ text: '[audio clip: not supported, left out]' }] },
};

function userParts(fixture: RuntimeFixture, sessionId: string): unknown[][] {
  const lines = readFileSync(join(fixture.chats, `${sessionId}.jsonl`), 'utf8')
    .trim()
    .split('\n');
  return lines.map((l) => JSON.parse(l) as { type: string; message?: { parts: unknown[] } }).flatMap((r) => (r.type === 'user' ? [r.message!.parts] : []));
}

describe('prompt blocks -> parts: one function for ACP and the daemon', { timeout: 60_000 }, () => {
  it('the conversion itself: whitespace-only text carries nothing', () => {
    expect(promptParts([{ type: 'text', text: '  \n' }])).toEqual([]);
    for (const { block, parts } of Object.values(BLOCKS)) expect(promptParts([block])).toEqual(parts);
  });

  it.each(Object.keys(BLOCKS))('%s: recorded the same through ACP and the daemon', async (kind) => {
    const { block, parts } = BLOCKS[kind]!;
    const blocks = kind === 'text' ? [block] : [{ type: 'text', text: 'with:' }, block];
    const expected = kind === 'text' ? parts : [{ text: 'with:' }, ...parts];

    const fixture = runtimeFixture([{ text: 'seen' }, { text: 'seen' }]);
    const viaAcp = await withInProcessAcp(fixture, async (run) => {
      const { sessionId } = await run.agent.request(acp.methods.agent.session.new, { cwd: fixture.cwd, mcpServers: [] });
      const answer = await run.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks as acp.ContentBlock[] });
      expect(answer.stopReason).toBe('end_turn');
      return userParts(fixture, sessionId);
    });

    const daemon = inProcessDaemon(fixture);
    const created = await daemon.call<{ sessionId: string }>('POST', '/session', { cwd: fixture.cwd });
    const sessionId = created.body.sessionId;
    const prompted = await daemon.call('POST', `/session/${sessionId}/prompt`, { prompt: blocks });
    expect(prompted.status).toBe(202);
    await waitFor(() => daemon.registry.get(sessionId)?.hasActivePrompt === false, 20_000, 'the prompt to end');
    const viaDaemon = userParts(fixture, sessionId);
    await daemon.close();

    expect(viaAcp).toEqual([expected]);
    expect(viaDaemon).toEqual([expected]);
  });

  it('a prompt of nothing (only whitespace text) is refused by both as invalid_request', async () => {
    const fixture = runtimeFixture([{ text: 'seen' }]);
    const blocks = [{ type: 'text', text: '   ' }];
    await withInProcessAcp(fixture, async (run) => {
      const { sessionId } = await run.agent.request(acp.methods.agent.session.new, { cwd: fixture.cwd, mcpServers: [] });
      const refused = await run.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks as acp.ContentBlock[] }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: -32602, data: { code: 'invalid_request' } });
    });
    const daemon = inProcessDaemon(fixture);
    const created = await daemon.call<{ sessionId: string }>('POST', '/session', { cwd: fixture.cwd });
    const refused = await daemon.call('POST', `/session/${created.body.sessionId}/prompt`, { prompt: blocks });
    await daemon.close();
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'invalid_request' });
  });
});
