/**
 * Another agent's tool calls in mend's terms, for a session continued in mend: a call
 * whose tool means the same as one of mend's gets mend's name (and its arguments under
 * mend's names); any other call stays as recorded. Ids are never changed.
 */
import type { FunctionCall } from '../session/records.js';
import { CLAUDE_TOOL_ALIASES } from '../wire/tool-aliases.js';
import type { ForeignAgent } from './adapter.js';

/** Gemini CLI's names that differ from mend's (the others are the same names). */
const GEMINI_TOOL_ALIASES: Readonly<Record<string, string>> = {
  replace: 'edit',
  search_file_content: 'grep_search',
  list_directory: 'list_directory',
};

function shellWords(words: readonly string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`)).join(' ');
}

/** A call mapped to mend's tool, or the same call when no mend tool means the same. */
export function toMendCall(agent: ForeignAgent, call: FunctionCall): FunctionCall {
  const args = call.args ?? {};
  if (agent === 'claude') {
    const name = Object.hasOwn(CLAUDE_TOOL_ALIASES, call.name) ? CLAUDE_TOOL_ALIASES[call.name]! : call.name;
    return name === call.name ? call : { ...call, name };
  }
  if (agent === 'codex') {
    if (call.name === 'exec_command' && typeof args['cmd'] === 'string') {
      const { cmd, ...rest } = args;
      return { ...call, name: 'run_shell_command', args: { ...rest, command: cmd } };
    }
    if ((call.name === 'shell' || call.name === 'local_shell' || call.name === 'container.exec') && Array.isArray(args['command'])) {
      const words = (args['command'] as unknown[]).map(String);
      // `bash -lc "<script>"` is the usual shape: the script is the command.
      const script = words.length === 3 && /(^|\/)(ba)?sh$/.test(words[0]!) && /^-l?c$/.test(words[1]!) ? words[2]! : shellWords(words);
      const { command: _command, ...rest } = args;
      return { ...call, name: 'run_shell_command', args: { ...rest, command: script } };
    }
    if (call.name === 'shell_command' && typeof args['command'] === 'string') return { ...call, name: 'run_shell_command' };
    return call;
  }
  const name = Object.hasOwn(GEMINI_TOOL_ALIASES, call.name) ? GEMINI_TOOL_ALIASES[call.name]! : call.name;
  return name === call.name ? call : { ...call, name };
}
