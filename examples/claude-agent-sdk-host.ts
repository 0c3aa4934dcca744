/**
 * A host written for Anthropic's `@anthropic-ai/claude-agent-sdk`, pointed at mend by one
 * option (`pathToClaudeCodeExecutable`), that gains mend's crash recovery: it resumes the
 * project's last session, reads mend's `system/recovery` line BEFORE sending any prompt (the
 * streaming-input pattern: the prompt is an async iterable that waits for the host's
 * decision), continues an interrupted turn when there is one, then asks its question.
 *
 *   npm run build
 *   node dist/examples/claude-agent-sdk-host.js [PROJECT_DIR] "QUESTION" [-- MORE_MEND_FLAGS...]
 *
 * e.g. `-- --scripted-responses answers.json` for an offline run on the scripted model.
 */
import { resolve } from 'node:path';
import { query, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { continueLastTurnViaClaudeQuery, recoveryMessageOf } from '../src/sdk/index.js';

function parseArgv(argv: string[]): { cwd: string; question: string; extraArgs: Record<string, string | null> } {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const rest = dash === -1 ? [] : argv.slice(dash + 1);
  const extraArgs: Record<string, string | null> = {};
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i]!.replace(/^--/, '');
    const value = rest[i + 1];
    if (value !== undefined && !value.startsWith('--')) {
      extraArgs[flag] = value;
      i++;
    } else extraArgs[flag] = null;
  }
  return { cwd: resolve(own[0] ?? process.cwd()), question: own[1] ?? 'What did you do last?', extraArgs };
}

async function main(): Promise<number> {
  const { cwd, question, extraArgs } = parseArgv(process.argv.slice(2));
  // The prompt waits until the host has seen what recovery found (a string prompt would run at once).
  let release!: (send: boolean) => void;
  const decided = new Promise<boolean>((r) => (release = r));
  async function* prompt(): AsyncGenerator<SDKUserMessage> {
    if (await decided) yield { type: 'user', session_id: '', parent_tool_use_id: null, message: { role: 'user', content: question } };
  }

  const q = query({
    prompt: prompt(),
    options: { cwd, pathToClaudeCodeExecutable: resolve(import.meta.dirname, '../../bin/mend.js'), continue: true, permissionMode: 'acceptEdits', extraArgs },
  });
  let pendingResults = 1;
  for await (const message of q) {
    const recovery = recoveryMessageOf(message);
    if (recovery) {
      console.log(`recovery: ${recovery.kind} (cause ${recovery.cause})${recovery.visible_notice ? ` - ${recovery.visible_notice}` : ''}`);
      if (recovery.can_continue) {
        const answer = await continueLastTurnViaClaudeQuery(q, recovery.plan_id);
        console.log(answer.accepted ? 'continuing the interrupted turn' : `not continued: ${answer.reason}`);
        if (answer.accepted) pendingResults++;
      }
      release(true);
    } else if (message.type === 'system' && message.subtype === 'init') {
      // A new session (no recovery line follows init): ask right away.
      if (!(message as { resumed?: boolean }).resumed) release(true);
    } else if (message.type === 'result') {
      console.log(message.subtype === 'success' ? `answer: ${message.result}` : `error: ${message.errors.join('; ')}`);
      if (--pendingResults === 0) break;
    }
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
