/**
 * `npm run demo`: a real crash, recovery and continuation on the built-in
 * scripted model, in a temporary home. The protocol lines mend prints go to
 * stdout; the narration goes to stderr.
 *
 * 1. A session starts a shell command (it appends to a marker file, then sleeps).
 * 2. The process is killed with SIGKILL while the command runs.
 * 3. `mend --continue` shows the recovery plan: interrupted_turn, one unfinished call.
 * 4. `mend --continue --continue-interrupted` finishes the turn without re-running it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin', 'mend.js');
// Bold headings only on a terminal, and never with NO_COLOR (https://no-color.org): a pipe or a log gets plain text.
const bold = process.stderr.isTTY === true && !process.env['NO_COLOR'];
const say = (text: string) => process.stderr.write(bold ? `\n\x1b[1m== ${text}\x1b[0m\n` : `\n== ${text}\n`);
const show = (line: string) => process.stdout.write(`${line}\n`);

function summarize(line: string): string {
  try {
    const m = JSON.parse(line) as Record<string, unknown>;
    if (m['type'] === 'system' && m['subtype'] === 'recovery') {
      const notice = m['visible_notice'] ? `\n   ${String(m['visible_notice'])}` : '';
      return `recovery: kind=${String(m['kind'])} cause=${String(m['cause'])} action=${String(m['action'])}${notice}`;
    }
    if (m['type'] === 'assistant') {
      const content = (m['message'] as { content: Array<Record<string, unknown>> }).content;
      return content
        .map((b) => (b['type'] === 'text' ? `assistant: ${String(b['text'])}` : `assistant calls ${String(b['name'])} ${JSON.stringify(b['input'])}`))
        .join('\n   ');
    }
    if (m['type'] === 'user') return `tool result: ${JSON.stringify((m['message'] as { content: unknown }).content).slice(0, 160)}...`;
    if (m['type'] === 'result')
      return `result: ${String(m['subtype'])} ${String(m['result'] ?? (m['error'] as { message?: string } | undefined)?.message ?? '')}`;
    return `${String(m['type'])}/${String(m['subtype'] ?? '')}`;
  } catch {
    return line;
  }
}

function runToEnd(args: string[], env: NodeJS.ProcessEnv, cwd: string): number {
  const r = spawnSync(process.execPath, [bin, ...args], { env, cwd, encoding: 'utf8' });
  for (const line of r.stdout.split('\n').filter(Boolean)) {
    show(line);
    process.stderr.write(`   ${summarize(line)}\n`);
  }
  if (r.stderr.trim()) process.stderr.write(r.stderr);
  return r.status ?? 1;
}

async function main(): Promise<number> {
  const base = mkdtempSync(join(tmpdir(), 'mend-demo-'));
  const home = join(base, 'home');
  const project = join(base, 'project');
  mkdirSync(project, { recursive: true });
  const marker = join(project, 'deploy.log');
  const script = join(base, 'model-script.json');
  writeFileSync(
    script,
    JSON.stringify([
      {
        text: 'I will run the deploy step.',
        toolCalls: [{ id: 'call_deploy', name: 'run_shell_command', args: { command: `echo "deploy ran" >> ${marker}; sleep 30; echo done` } }],
      },
      {
        text: 'The deploy step was interrupted and its outcome is unknown. I will check the deploy log before deciding anything.',
        toolCalls: [{ id: 'call_check', name: 'read_file', args: { file_path: marker } }],
      },
      { text: 'The log shows the deploy ran once. I will not run it again; please verify the deployment by hand.' },
    ]),
  );
  const env = { ...process.env, MEND_HOME: home };
  const common = ['--scripted-responses', script, '-o', 'stream-json'];

  say(`1. Start a session in ${project}; the model runs a slow shell command`);
  const child = spawn(process.execPath, [bin, '-p', 'Deploy the app.', '--approval-mode', 'yolo', ...common], { env, cwd: project });
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      show(line);
      process.stderr.write(`   ${summarize(line)}\n`);
    }
  });
  const exited = new Promise<number | null>((done) => child.on('exit', (code, signal) => done(signal ? 128 + 9 : code)));
  for (let i = 0; i < 100 && !existsSync(marker); i++) await sleep(50);
  if (!existsSync(marker)) {
    process.stderr.write('the shell command never started\n');
    child.kill('SIGKILL');
    return 1;
  }

  say('2. kill -9 the CLI while the command runs (a crash: no chance to clean up)');
  child.kill('SIGKILL');
  process.stderr.write(`   exit: ${String(await exited)} (killed)\n`);
  // The orphaned command's process group was not ours to wait for; stop it so the demo ends cleanly.
  spawnSync('pkill', ['-f', `sleep 30; echo done`]);

  say('3. mend --continue: inspect the crashed session (no model call, no lock, nothing written)');
  runToEnd(['--continue', ...common], env, project);

  say('4. mend --continue --continue-interrupted: the dangling call is closed as "outcome unknown"; nothing is re-run');
  const code = runToEnd(['--continue', '--continue-interrupted', ...common], env, project);

  say('5. The deploy command ran exactly once, and the session is clean again');
  process.stderr.write(`   ${marker}: ${JSON.stringify(readFileSync(marker, 'utf8'))}\n`);
  runToEnd(['--continue', ...common], env, project);
  if (!process.env['MEND_DEMO_KEEP']) rmSync(base, { recursive: true, force: true });
  else process.stderr.write(`   kept ${base}\n`);
  return code;
}

process.exitCode = await main();
