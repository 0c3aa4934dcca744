/**
 * `mend repair <path> [--json]`: another agent's crashed session, repaired for that agent.
 * The plan is the one `mend plan` prints (the runtime opens the file read-only); the
 * owner's writer serialises it into a new session beside the source (src/foreign/repair),
 * and this prints what was done and the owner's command to resume, with the directory it
 * must run in. The source is never written.
 */
import { errorCodeOf, errorMessageOf, MendError } from '../errors.js';
import { repairForeignFile } from '../foreign/repair/repair-file.js';
import type { OwnerRepairAction } from '../foreign/repair/repair-types.js';
import { SessionRuntime } from '../runtime/session-runtime.js';
import { ExitCode, exitCodeFor } from '../wire/exit-codes.js';
import type { CommandIo } from './plan-command.js';

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function describe(action: OwnerRepairAction): string {
  switch (action.type) {
    case 'synthesized_tool_result':
      return `answered call ${action.callId} (${action.name}) once: outcome unknown, verify before retrying`;
    case 'dropped_damaged_line':
      return `left out line ${action.line} (${action.code}${action.bytes !== undefined ? `, ${action.bytes} bytes` : ''})`;
    case 'removed_nul_bytes':
      return `removed ${action.bytes} NUL bytes from line ${action.line}`;
    case 'not_applied':
      return `kept as written: ${action.repair.type} (${action.reason})`;
  }
}

export async function repairCommand(args: { target: string; json: boolean }, io: CommandIo): Promise<number> {
  let runtime: SessionRuntime | undefined;
  try {
    runtime = await SessionRuntime.open(io.runtime, {
      target: { type: 'resume', target: args.target },
      access: 'inspect',
      histories: 'eager',
      settings: { model: undefined, approvalMode: 'default', allowedTools: [], maxTurns: 1, allowAutoContinue: false, acceptDegraded: false },
    });
    const ref = runtime.ref;
    if (!ref.foreign) {
      throw new MendError(
        'usage',
        `${ref.location} is a mend session: continue it with mend --resume; mend repair writes sessions of Claude Code, Codex and Gemini CLI`,
        {
          path: ref.location,
        },
      );
    }
    // The repair writes the repaired history: the plan with its histories (read at open: eager).
    const current = await runtime.loadHistory();
    if (current === null) throw new MendError('session_not_found', `session not found: ${ref.location}`, { path: ref.location });
    const { plan, loaded } = current;
    const origin = loaded.conversation.origin;
    const repair = await repairForeignFile({ path: ref.location, agent: ref.foreign.agent, plan, sha256: origin?.sha256 });
    const text = [...(repair.resume.cwd !== null ? [`cd ${shellWord(repair.resume.cwd)}`] : []), repair.resume.argv.map(shellWord).join(' ')].join(' && ');
    if (args.json) {
      const out = {
        agent: repair.agent,
        source: ref.location,
        sessionId: repair.sessionId,
        path: repair.path,
        resumeCommand: { cwd: repair.resume.cwd, argv: repair.resume.argv, text },
        planId: plan.planId,
        repairs: repair.repairs,
      };
      io.stdout.write(`${JSON.stringify(out)}\n`);
      return ExitCode.success;
    }
    const lines = [
      `agent     ${repair.agent}${origin?.agentVersion ? ` ${origin.agentVersion}` : ''}`,
      `source    ${ref.location} (not modified)`,
      `plan      ${plan.planId} (${plan.kind}, cause: ${plan.cause})`,
      `wrote     ${repair.path}`,
      `session   ${repair.sessionId}`,
      `repairs   ${repair.repairs.length === 0 ? 'none (a copy under a new id)' : ''}`,
      ...repair.repairs.map((a) => `  - ${describe(a)}`),
      '',
      `Resume it with ${repair.agent === 'claude' ? 'Claude Code (it looks only in the folder of the directory it runs in)' : repair.agent === 'codex' ? 'Codex' : 'Gemini CLI (from the project it belongs to)'}:`,
      `  ${text}`,
    ];
    io.stdout.write(`${lines.join('\n')}\n`);
    return ExitCode.success;
  } catch (error) {
    const code = errorCodeOf(error);
    const message = errorMessageOf(error);
    if (args.json) io.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    io.stderr.write(`mend: error [${code}]: ${message}\n`);
    return exitCodeFor(code);
  } finally {
    await runtime?.close();
  }
}
