/**
 * Captures one real crashed session per peer CLI into fixtures/foreign-real/: the real CLI
 * (Claude Code, Codex, Gemini CLI at the versions test/support/peer-cli pins) runs offline
 * against the loopback model mock, its model asks for a slow shell command, and the whole
 * process group is killed with SIGKILL once the command has started. The session file it
 * left is copied byte for byte.
 *
 *   npm run build && node dist/scripts/capture-peer-sessions.js [claude|codex|gemini ...]
 */
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { killMidTool, markerCount, peerSandbox } from '../test/support/peer-cli/drive-peer.js';
import { PEER_AGENTS, REPO_ROOT, type PeerAgentName } from '../test/support/peer-cli/peer-agents.js';

const PROMPT = 'Run the slow step.';
/** What each CLI has written before it runs a tool (Gemini writes the call only afterwards). */
const HOLDS: Record<PeerAgentName, string | undefined> = { claude: 'toolu_mock_slow_1', codex: 'call_mock_slow_1', gemini: undefined };

async function capture(name: PeerAgentName): Promise<void> {
  const agent = PEER_AGENTS[name];
  const root = join('/tmp', 'mend-peer-capture', name);
  rmSync(root, { recursive: true, force: true });
  const sandbox = await peerSandbox(agent, root);
  try {
    const run = await killMidTool(agent, sandbox, PROMPT, { sessionHolds: HOLDS[name] });
    const dir = join(REPO_ROOT, 'fixtures', 'foreign-real', `${name}-killed-mid-tool`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const file = basename(run.sessionFile);
    copyFileSync(run.sessionFile, join(dir, file));
    writeFileSync(
      join(dir, 'README.md'),
      `\`${file}\`: written by the real ${agent.displayName} ${agent.version}, run offline by ` +
        `scripts/capture-peer-sessions.ts (cwd ${sandbox.layout.cwd}, a fresh HOME) on the prompt "${PROMPT}" ` +
        `against the loopback model mock of test/support/peer-cli, whose answer is one slow shell call; ` +
        `the CLI's process group was killed with SIGKILL while the command ran (it had started ${markerCount(sandbox.layout)} time). ` +
        `Copied byte for byte on ${new Date().toISOString().slice(0, 10)}.\n`,
    );
    console.log(`${name}: ${file} (${sandbox.mock.requests.length} model requests)`);
  } finally {
    await sandbox.mock.close();
  }
}

const names = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(PEER_AGENTS)) as PeerAgentName[];
for (const name of names) {
  if (!(name in PEER_AGENTS)) throw new Error(`unknown agent ${name}`);
  await capture(name);
}
