/**
 * Resume the most recent session of a project after a crash, show what recovery
 * found, ask before continuing, then continue the interrupted turn.
 *
 *   npm run build
 *   node dist/examples/resume-crashed-session.js [PROJECT_DIR] [-- MORE_MEND_FLAGS...]
 *
 * e.g. `-- --provider scripted --scripted-responses answers.json` for an offline demo.
 */
import { createInterface } from 'node:readline/promises';
import { MendProcessError, query, type SDKRecoveryMessage } from '../src/sdk/index.js';

function parseArgv(argv: string[]): { cwd: string; extraArgs: string[] } {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? argv : argv.slice(0, dash);
  return { cwd: own[0] ?? process.cwd(), extraArgs: dash === -1 ? [] : argv.slice(dash + 1) };
}

function banner(r: SDKRecoveryMessage): string {
  const lines = [`Recovered session ${r.session_id}`, `  state:   ${r.kind} (cause: ${r.cause})`];
  if (r.visible_notice) lines.push(`  notice:  ${r.visible_notice}`);
  const repairs = r.repairs.map((x) => `${x.type} x${x.count}`).join(', ');
  lines.push(`  repairs: ${repairs || 'none'}`);
  if (r.previous_attempts > 0) lines.push(`  earlier recovery attempts: ${r.previous_attempts}`);
  if (r.continuation) lines.push(`  would continue with: ${r.continuation.display_text}`);
  return lines.join('\n');
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

async function main(): Promise<number> {
  const { cwd, extraArgs } = parseArgv(process.argv.slice(2));
  const q = query({ options: { cwd, continue: true, extraArgs } });
  try {
    for await (const message of q) {
      if (message.type === 'system' && message.subtype === 'recovery') {
        console.log(banner(message));
        if (!message.can_continue) {
          console.log('Nothing to continue.');
          return 0;
        }
        if (!(await confirm('Continue the interrupted turn? [y/N] '))) {
          console.log('Not continuing.');
          return 0;
        }
        const answer = await q.continueLastTurn({ planId: message.plan_id });
        if (!answer.accepted) {
          console.log(`Continuation refused: ${answer.reason ?? 'no reason given'}`);
          return 1;
        }
        console.log(`Continuing (${answer.interruption})...`);
      } else if (message.type === 'assistant') {
        for (const block of message.message.content) {
          if (block.type === 'text') console.log(block.text);
          if (block.type === 'tool_use') console.log(`[tool] ${block.name} ${JSON.stringify(block.input)}`);
        }
      } else if (message.type === 'result') {
        console.log(message.is_error ? `Result: error (${message.error?.code}): ${message.error?.message}` : `Result: ${message.result ?? ''}`);
        return message.is_error ? 1 : 0;
      }
    }
    return 0;
  } catch (error) {
    if (error instanceof MendProcessError) {
      console.error(`mend exited (${error.exitCode ?? error.signal}): ${error.message}`);
      return error.exitCode ?? 1;
    }
    throw error;
  } finally {
    await q.close();
  }
}

process.exitCode = await main();
