/**
 * The three real peer CLIs, each driven offline against a loopback model mock: where the
 * binary is, the fresh home and config it needs (telemetry, updates and retries off), the
 * argv of a first run and of a resume, the scripted model answer (first turn: one slow shell
 * call that appends a line to a marker file; later turns: text), and where it keeps sessions.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { anthropicText, anthropicToolUse } from './anthropic-sse.js';
import { geminiJson, geminiStreamFunctionCall, geminiStreamText } from './gemini-sse.js';
import type { AnswerFn, MockRequest } from './model-mock.js';
import { responsesFunctionCall, responsesText } from './responses-sse.js';

export type PeerAgentName = 'claude' | 'codex' | 'gemini';

/** The repository root, from the source tree or from its build under dist/. */
function repoRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'package.json')) || basename(dir) === 'dist') dir = dirname(dir);
  return dir;
}

export const REPO_ROOT = repoRoot();

/** The slow command each model asks to run: one marker line per run, then 30 s of sleep. */
export function slowCommand(marker: string): string {
  return `echo start; echo ran >> ${marker}; sleep 30; echo end`;
}

export const FINAL_TEXT = 'Checked: nothing left to do.';

export interface PeerLayout {
  /** The fresh HOME of every run. */
  home: string;
  /** The project directory every run uses as cwd. */
  cwd: string;
  /** The file the slow command appends to (one line per run). */
  marker: string;
}

export interface PeerAgent {
  name: PeerAgentName;
  /** The product name and where the pinned binary comes from. */
  displayName: string;
  /** The pinned version this suite drives. */
  version: string;
  /** The CLI's executable, or undefined when it is not installed. */
  binary(): string | undefined;
  /** Writes the config files into `layout.home` and returns the environment of each run. */
  prepare(layout: PeerLayout, origin: string): NodeJS.ProcessEnv;
  firstArgs(prompt: string): string[];
  resumeArgs(sessionId: string, prompt: string): string[];
  /** The model's script: the first shell-offering turn gets the slow call, everything else text. */
  answer(layout: PeerLayout): AnswerFn;
  /** True for the request that carries the conversation to a model turn (not side calls). */
  isModelTurn(request: MockRequest): boolean;
  /** Every session file under the home (absolute paths). */
  sessionFiles(home: string): string[];
}

function baseEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: process.env.TMPDIR ?? '/tmp',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
  };
}

function filesUnder(dir: string, test: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, test));
    else if (entry.isFile() && test(entry.name)) out.push(path);
  }
  return out.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
}

function bodyOf(request: MockRequest): Record<string, unknown> {
  return typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
}

function offersTool(request: MockRequest, name: string): boolean {
  const tools = bodyOf(request).tools;
  if (!Array.isArray(tools)) return false;
  return JSON.stringify(tools).includes(`"${name}"`);
}

const installed = (path: string): string | undefined => (existsSync(path) ? path : undefined);

export const claudeAgent: PeerAgent = {
  name: 'claude',
  displayName: 'Claude Code (the native binary of @anthropic-ai/claude-agent-sdk-linux-x64 0.3.333)',
  version: '2.1.333',
  binary: () => installed(join(REPO_ROOT, 'node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude')),
  prepare(layout, origin) {
    return {
      ...baseEnv(layout.home),
      CLAUDE_CONFIG_DIR: join(layout.home, '.claude'),
      ANTHROPIC_BASE_URL: origin,
      ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_BUG_COMMAND: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
  },
  firstArgs: (prompt) => ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Bash'],
  resumeArgs: (id, prompt) => ['-p', '--resume', id, prompt, '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Bash'],
  answer(layout) {
    let called = false;
    let n = 0;
    return (request) => {
      if (request.method === 'HEAD' || request.method === 'GET') return { kind: 'empty', status: 200 };
      if (request.url.includes('count_tokens')) return { kind: 'json', body: { input_tokens: 12 } };
      const model = String(bodyOf(request).model ?? 'claude-mock');
      n += 1;
      if (!called && offersTool(request, 'Bash')) {
        called = true;
        return anthropicToolUse({
          messageId: `msg_mock_${n}`,
          model,
          toolUseId: 'toolu_mock_slow_1',
          name: 'Bash',
          input: { command: slowCommand(layout.marker), description: 'Run the slow step' },
        });
      }
      return anthropicText({ messageId: `msg_mock_${n}`, model, text: FINAL_TEXT });
    };
  },
  isModelTurn: (request) =>
    request.method === 'POST' && request.url.startsWith('/v1/messages') && !request.url.includes('count_tokens') && offersTool(request, 'Bash'),
  sessionFiles: (home) => filesUnder(join(home, '.claude', 'projects'), (name) => name.endsWith('.jsonl')),
};

export const codexAgent: PeerAgent = {
  name: 'codex',
  displayName: 'Codex CLI (@openai/codex)',
  version: '0.171.0',
  binary: () => installed(join(REPO_ROOT, 'node_modules/.bin/codex')),
  prepare(layout, origin) {
    const codexHome = join(layout.home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "gpt-mock"',
        'model_provider = "mock"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        'check_for_update_on_startup = false',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[model_providers.mock]',
        'name = "mock"',
        `base_url = "${origin}/v1"`,
        'wire_api = "responses"',
        'env_key = "MOCK_API_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
      ].join('\n'),
    );
    return { ...baseEnv(layout.home), CODEX_HOME: codexHome, MOCK_API_KEY: 'sk-test-dummy' };
  },
  firstArgs: (prompt) => ['exec', '--skip-git-repo-check', '--json', prompt],
  resumeArgs: (id, prompt) => ['exec', '--skip-git-repo-check', '--json', 'resume', id, prompt],
  answer(layout) {
    let called = false;
    let n = 0;
    return (request) => {
      if (request.method !== 'POST') return { kind: 'empty', status: 404 };
      n += 1;
      if (!called && offersTool(request, 'exec_command')) {
        called = true;
        return responsesFunctionCall({
          responseId: `resp_mock_${n}`,
          callId: 'call_mock_slow_1',
          name: 'exec_command',
          args: { cmd: slowCommand(layout.marker) },
        });
      }
      return responsesText({ responseId: `resp_mock_${n}`, text: FINAL_TEXT });
    };
  },
  isModelTurn: (request) => request.method === 'POST' && request.url.startsWith('/v1/responses'),
  sessionFiles: (home) => filesUnder(join(home, '.codex', 'sessions'), (name) => name.startsWith('rollout-') && name.endsWith('.jsonl')),
};

const GEMINI_SIDE_ANSWER = { reasoning: 'mock', model_choice: 'flash', complexity_reasoning: 'mock', complexity_score: 10, next_speaker: 'user' };

export const geminiAgent: PeerAgent = {
  name: 'gemini',
  displayName: 'Gemini CLI (@google/gemini-cli)',
  version: '0.61.0',
  binary: () => installed(join(REPO_ROOT, 'node_modules/.bin/gemini')),
  prepare(layout, origin) {
    const dir = join(layout.home, '.gemini');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'settings.json'),
      JSON.stringify(
        {
          general: { disableAutoUpdate: true, disableUpdateNag: true, sessionRetention: { enabled: false } },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          security: { auth: { selectedType: 'gemini-api-key' } },
        },
        null,
        2,
      ),
    );
    return { ...baseEnv(layout.home), GOOGLE_GEMINI_BASE_URL: origin, GEMINI_API_KEY: 'test-dummy-key', GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  },
  firstArgs: (prompt) => ['-p', prompt, '--yolo', '-o', 'stream-json'],
  resumeArgs: (id, prompt) => ['--resume', id, '-p', prompt, '--yolo', '-o', 'stream-json'],
  answer(layout) {
    let called = false;
    return (request) => {
      if (request.method !== 'POST') return { kind: 'empty', status: 404 };
      // Side calls (the routers, next-speaker checks) want JSON; one object satisfies each schema.
      if (request.url.includes(':generateContent')) return geminiJson(JSON.stringify(GEMINI_SIDE_ANSWER));
      if (request.url.includes(':countTokens')) return { kind: 'json', body: { totalTokens: 12 } };
      if (!called && offersTool(request, 'run_shell_command')) {
        called = true;
        return geminiStreamFunctionCall('run_shell_command', { command: slowCommand(layout.marker), description: 'Run the slow step' });
      }
      return geminiStreamText(FINAL_TEXT);
    };
  },
  isModelTurn: (request) => request.method === 'POST' && request.url.includes(':streamGenerateContent'),
  sessionFiles: (home) =>
    filesUnder(join(home, '.gemini', 'tmp'), (name) => name.startsWith('session-') && (name.endsWith('.jsonl') || name.endsWith('.json'))),
};

export const PEER_AGENTS: Record<PeerAgentName, PeerAgent> = { claude: claudeAgent, codex: codexAgent, gemini: geminiAgent };
