// A stand-in for the mend CLI in transport tests. FAKE_CLI picks the behaviour.
import { createInterface } from 'node:readline';

const out = (s) => process.stdout.write(s);
const scenario = process.env.FAKE_CLI;

switch (scenario) {
  case 'framing': {
    out(
      JSON.stringify({
        type: 'argv',
        argv: process.argv.slice(2),
        cwd: process.cwd(),
        foo: process.env.FAKE_FOO ?? null,
        gone: process.env.FAKE_GONE ?? null,
      }) + '\n',
    );
    out(JSON.stringify({ type: 'system', subtype: 'future', uuid: 'u', session_id: 's' }) + '\r\n');
    out('\n   \n\r\n');
    out('not json\n');
    out('42\n');
    out(JSON.stringify({ type: 'future_thing', x: 1 }) + '\n');
    out(JSON.stringify({ type: 'assistant', uuid: 'u' }) + '\n');
    out(JSON.stringify({ type: 'last', unterminated: true }));
    break;
  }
  case 'overlong': {
    out(JSON.stringify({ type: 'first' }) + '\n');
    out('x'.repeat(2048) + '\n');
    out(JSON.stringify({ type: 'never_seen' }) + '\n');
    process.stdin.resume();
    break;
  }
  case 'silent': {
    process.exit(0);
    break;
  }
  case 'garbage': {
    out('this is not the protocol\n');
    process.stdin.resume();
    setInterval(() => {}, 1000);
    break;
  }
  case 'fail': {
    process.stderr.write('x'.repeat(100 * 1024) + '\n');
    process.stderr.write('fatal: boom\n', () => process.exit(3));
    break;
  }
  case 'echo': {
    const rl = createInterface({ input: process.stdin });
    rl.on('line', (line) => {
      let parsed = null;
      try {
        parsed = JSON.parse(line);
      } catch {}
      out(JSON.stringify({ type: 'echo', raw: line, parsed }) + '\n');
    });
    rl.on('close', () => process.exit(0));
    break;
  }
  case 'stubborn': {
    process.on('SIGTERM', () => out(JSON.stringify({ type: 'got_sigterm' }) + '\n'));
    process.stdin.resume();
    process.stdin.on('end', () => {});
    setInterval(() => {}, 1000);
    out(JSON.stringify({ type: 'ready', pid: process.pid }) + '\n');
    break;
  }
  case 'term': {
    process.on('SIGTERM', () => process.exit(143));
    process.stdin.resume();
    process.stdin.on('end', () => {});
    setInterval(() => {}, 1000);
    out(JSON.stringify({ type: 'ready' }) + '\n');
    break;
  }
  case 'suicide': {
    setInterval(() => {}, 1000);
    out(JSON.stringify({ type: 'ready' }) + '\n');
    setTimeout(() => process.kill(process.pid, 'SIGKILL'), 50);
    break;
  }
  default:
    process.stderr.write(`unknown FAKE_CLI=${scenario}\n`);
    process.exit(2);
}
