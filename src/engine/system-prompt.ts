/**
 * The system prompt mend sends with every model request. One file, versioned, pure: the
 * same inputs give the same text byte for byte, so a session can record which version
 * it ran with and a test can pin the wording. The model cannot see mend's cwd, its
 * sandbox rules or its crash recovery; everything it needs to use the tools well and to
 * handle a resumed turn safely is said here.
 */
import type { ToolDeclaration } from '../providers/provider.js';

/** Bump whenever the text changes in a way a model could notice. */
export const SYSTEM_PROMPT_VERSION = 2;

export interface SystemPromptInput {
  /** The project root (absolute). Relative tool paths resolve against it. */
  projectRoot: string;
  /** Directories added with --add-dir / --include-directories; file tools may use them too. */
  extraRoots: readonly string[];
  /** e.g. process.platform ('linux', 'darwin'). */
  platform: string;
  /** The current date; a Date is reduced to its UTC day so the prompt changes at most once a day. */
  date: string | Date;
  tools: readonly ToolDeclaration[];
  mendVersion: string;
  /** Who is on the other side (default: a headless run): says whether a person can answer. */
  frontEnd?: FrontEndKind;
}

/** The front ends a session runs under; each has its own truth about who reads and who can answer. */
export type FrontEndKind = 'headless' | 'stream-json' | 'tui' | 'acp' | 'daemon';

const WHO_IS_THERE: Readonly<Record<FrontEndKind, string>> = {
  headless:
    "a coding agent running headless in a terminal. You work on the user's project with the tools below. Nobody can answer " +
    'questions during a turn: act on the request, verify your work, and finish with a short answer that says what you did.',
  'stream-json':
    "a coding agent driven by a program over a JSON protocol. You work on the user's project with the tools below. The program " +
    'may approve tool calls, but nobody answers questions during a turn: act on the request, verify your work, and finish with ' +
    'a short answer that says what you did.',
  tui:
    "a coding agent in an interactive terminal UI. You work on the user's project with the tools below. The user reads your " +
    'answer as it streams, approves tool calls that change things and can reply after each turn: act on the request and verify ' +
    "your work; when a choice is the user's to make, end your answer with a short question instead of guessing.",
  acp:
    "a coding agent inside the user's editor. You work on the user's project with the tools below. The user reads your answer " +
    'in the editor, approves tool calls that change things and can reply after each turn: act on the request and verify your ' +
    "work; when a choice is the user's to make, end your answer with a short question instead of guessing.",
  daemon:
    "a coding agent served to client applications over HTTP. You work on the user's project with the tools below. A client " +
    'may approve tool calls and send the next prompt after each turn, but nobody answers during a turn: act on the request, ' +
    'verify your work, and finish with a short answer that says what you did (and what is left to the user, if anything).',
};

/** Tools that take paths and are confined to the workspace (see src/tools/paths.ts). */
const FILE_TOOLS = ['read_file', 'write_file', 'edit', 'list_directory', 'glob', 'grep_search'];
const SHELL_TOOL = 'run_shell_command';

export function buildSystemPrompt(input: SystemPromptInput): string {
  const day = typeof input.date === 'string' ? input.date : input.date.toISOString().slice(0, 10);
  const names = new Set(input.tools.map((tool) => tool.name));
  const fileTools = FILE_TOOLS.filter((name) => names.has(name));
  const sections = [
    `You are mend ${input.mendVersion}, ${WHO_IS_THERE[input.frontEnd ?? 'headless']}`,
    environment(input, day),
    toolList(input.tools),
    paths(input, fileTools, names.has(SHELL_TOOL)),
    recovery(),
  ];
  return `${sections.join('\n\n')}\n`;
}

function environment(input: SystemPromptInput, day: string): string {
  const lines = ['# Environment', `- Project root: ${input.projectRoot}`];
  if (input.extraRoots.length > 0) lines.push(`- Added directories: ${input.extraRoots.join(', ')}`);
  lines.push(`- Platform: ${input.platform}`, `- Date: ${day}`);
  return lines.join('\n');
}

function toolList(tools: readonly ToolDeclaration[]): string {
  if (tools.length === 0) return '# Tools\nNo tools are available in this session: answer from the conversation alone.';
  const lines = tools.map((tool) => `- ${tool.name}: ${tool.description.replace(/\s+/g, ' ').trim()}`);
  return [
    '# Tools',
    ...lines,
    'Call tools with a JSON object of arguments that matches their schema. Independent calls can be made together in one response. ' +
      'Read a file before editing it, and prefer edit (exact text replacement) over rewriting a whole file.',
  ].join('\n');
}

function paths(input: SystemPromptInput, fileTools: readonly string[], hasShell: boolean): string {
  const lines = ['# Paths and boundaries'];
  if (fileTools.length > 0) {
    const roots = input.extraRoots.length > 0 ? `the project root and the added directories` : 'the project root';
    lines.push(
      `- Paths given to ${fileTools.join(', ')} may be absolute or relative to the project root (${input.projectRoot}).`,
      `- These file tools only work inside ${roots}; symlinks are resolved first. A path outside is refused in every approval ` +
        'mode: do not try to work around it; say what you need instead.',
    );
  }
  if (hasShell) {
    lines.push(
      `- ${SHELL_TOOL} is not confined: it runs with the user's permissions anywhere the user can. Its directory defaults to the ` +
        'session directory and may be relative to the project root. Commands left running in the background with `&` are killed ' +
        'when the call ends; use is_background for servers and watchers.',
    );
  }
  return lines.join('\n');
}

function recovery(): string {
  return [
    '# Interrupted turns',
    '- mend records every tool call before it runs and every result after it. After a crash or an interruption, tool calls are ' +
      'never run again automatically.',
    '- A tool result that says the outcome is unknown means the call may have run completely, partly or not at all. Check the ' +
      'current state first (read the file, list the directory, query the process or service) and only then decide whether to run ' +
      'it again. Never repeat a command with side effects blindly.',
  ].join('\n');
}
