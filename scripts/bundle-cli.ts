/**
 * Part of `npm run build`: bundles the compiled CLI (dist/src/cli/main.js) into one
 * CommonJS file, dist/cli/mend.cjs, and seeds its V8 code cache (dist/cli/mend.cjs.cache)
 * with a tiny resume, the path bin/mend.js loads it for (start-up to
 * `system/init`). Node's ESM loader resolves, reads, compiles and links the ~230 modules
 * of a resume one by one (~1 ms each here); one script with cached code skips most of
 * that. The package stays ESM; the bundle is a build artifact of the same sources (one
 * record schema, one parser), and bin/mend.js falls back to the ESM entry without it.
 *
 * Packages only a model request, a tool or an interactive front end needs stay outside
 * (required or imported when that path runs): the start-up path is mend, zod and yargs.
 */
import { spawnSync } from 'node:child_process';
import { Module } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { sessionLogPath } from '../src/session/session-paths.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const outfile = join(root, 'dist', 'cli', 'mend.cjs');

const zodEnglishOnly: Plugin = {
  // zod's classic API re-exports every locale (`z.locales`); mend uses none but the
  // default English one, which zod's core imports itself. Some 40 locale modules were
  // a tenth of the bundle, all evaluated at every start.
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales', namespace: 'zod-locales', pluginData: args.resolveDir } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from './en.js';`,
      resolveDir: join(args.pluginData as string, '..', 'locales'),
      loader: 'js',
    }));
  },
};

/** The record schema's own bundle, next to the worker's, which requires it when first needed. */
const WORKER_SCHEMA = './outline-worker-schema.js';

// The worker thread of a large log's outline pass (src/session/outline/outline-parallel.ts), next
// to the bundle, where the bundled code looks for it (`./outline-worker.js` from its own
// URL); dist/cli/package.json makes that .js file CommonJS like the bundle.
await build({
  entryPoints: [join(root, 'dist', 'src', 'session', 'outline', 'outline-worker.js')],
  outfile: join(root, 'dist', 'cli', 'outline-worker.js'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  define: { 'import.meta.url': '__mendBundleUrl' },
  banner: { js: 'var __mendBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  legalComments: 'none',
  logLevel: 'warning',
  external: [WORKER_SCHEMA],
  plugins: [
    zodEnglishOnly,
    {
      // The worker validates with zod only a record the hand-written check is unsure of
      // (record-validation.ts), which most logs have none of: the record schema, and zod
      // with it, is loaded from a bundle of its own the first time one needs it. zod was
      // nine tenths of the worker's bundle and 40-60 ms of its start, while the
      // main thread parsed alone.
      name: 'lazy-worker-schema',
      setup(b) {
        b.onResolve({ filter: /^\.\/records\.js$/ }, (args) =>
          /record-validation\.js$/.test(args.importer) ? { path: 'records', namespace: 'lazy-worker-schema' } : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: 'lazy-worker-schema' }, () => ({
          contents: `let schema; export const ChatRecordSchema = { safeParse: (value) => (schema ??= require(${JSON.stringify(WORKER_SCHEMA)}).ChatRecordSchema).safeParse(value) };`,
          loader: 'js',
        }));
      },
    },
  ],
});
await build({
  entryPoints: [join(root, 'dist', 'src', 'session', 'records.js')],
  outfile: join(root, 'dist', 'cli', WORKER_SCHEMA),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [zodEnglishOnly],
});
// What the worker's bundle may hold: not zod (measured without it: ~60 KB).
if (readFileSync(join(root, 'dist', 'cli', 'outline-worker.js'), 'latin1').length > 200_000)
  throw new Error('bundle-cli: the outline worker bundle grew (zod in it again?)');
writeFileSync(join(root, 'dist', 'cli', 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);

await build({
  entryPoints: [join(root, 'dist', 'src', 'cli', 'main.js')],
  outfile,
  bundle: true,
  minifyWhitespace: true,
  minifySyntax: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: [
    'openai',
    'execa',
    'pg',
    'ink',
    'ink-*',
    'react',
    'react/*',
    '@agentclientprotocol/*',
    'hono',
    'hono/*',
    '@hono/*',
    'ndjson',
    'eventsource-parser',
    'eventsource-parser/*',
    // The MCP client: loaded only by a session that has MCP servers (src/tools/mcp/mcp-hub.ts imports it lazily).
    '@modelcontextprotocol/*',
  ],
  // ESM code that asks for its own URL (yargs' shims) gets the bundle's.
  define: { 'import.meta.url': '__mendBundleUrl' },
  banner: { js: 'var __mendBundleUrl = require("node:url").pathToFileURL(__filename).href;\nvar __mendImport = globalThis[Symbol.for("mend.import")];' },
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [
    zodEnglishOnly,
    {
      // yargs lays out --help and error text with cliui and string-width, whose module
      // bodies (string-width builds a large emoji regex) were a tenth of every start-up:
      // they are loaded on their first call instead, i.e. only when help or an error is shown.
      name: 'lazy-help-layout',
      setup(b) {
        b.onResolve({ filter: /^(cliui|string-width)$/ }, (args) =>
          /[\\/]yargs[\\/]/.test(args.importer) ? { path: args.path, namespace: 'lazy-help-layout', pluginData: args.resolveDir } : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: 'lazy-help-layout' }, (args) => ({
          contents: `let real; export default function (...args) { real ??= require(${JSON.stringify(args.path)}); return (real.default ?? real)(...args); }`,
          resolveDir: args.pluginData as string,
          loader: 'js',
        }));
      },
    },
    {
      // yargs looks for a package.json (a version it guesses, even when the CLI sets none)
      // from the directory above the node_modules its shim sits in: mend's own root when
      // run from the modules. In the bundle that directory is not found and yargs walked up
      // from the working directory instead, listing every directory to the root and reading
      // the user's package.json. The bundle starts from mend's root too.
      name: 'yargs-package-root',
      setup(b) {
        b.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, (args) => {
          const source = readFileSync(args.path, 'utf8');
          const from = "__dirname.substring(0, __dirname.lastIndexOf('node_modules'))";
          if (!source.includes(from)) throw new Error('bundle-cli: yargs changed how it finds its package root');
          // The bundle is dist/cli/mend.cjs: the package root is two directories up.
          return { contents: source.replace(from, "join(dirname(__dirname), '..', '..')"), loader: 'js' };
        });
      },
    },
    {
      // yargs' platform shim imports node's assert (5-6 ms to load: it pulls in a dozen
      // internal modules) for two checks yargs makes on its own state while commands are
      // set up. They pass on every run; node's assert (Object.is, as here) is loaded only
      // to throw its own error when one fails.
      name: 'lazy-yargs-assert',
      setup(b) {
        b.onResolve({ filter: /^assert$/ }, (args) => (/[\\/]yargs[\\/]/.test(args.importer) ? { path: 'assert', namespace: 'lazy-yargs-assert' } : undefined));
        b.onLoad({ filter: /.*/, namespace: 'lazy-yargs-assert' }, () => ({
          contents: `export function notStrictEqual(actual, expected, message) { if (Object.is(actual, expected)) require('node:assert').notStrictEqual(actual, expected, message); }
export function strictEqual(actual, expected, message) { if (!Object.is(actual, expected)) require('node:assert').strictEqual(actual, expected, message); }`,
          loader: 'js',
        }));
      },
    },
    {
      // bin/mend.js runs the terminal UI, --acp and serve from the ESM modules (their
      // packages are ESM-only), so their code is left out of the bundle: less to load.
      name: 'esm-only-front-ends',
      setup(b) {
        b.onResolve({ filter: /^\.\.\/frontends\/(tui\/run-tui|acp\/run-acp|daemon\/serve)\.js$/ }, (args) =>
          args.importer.endsWith(join('cli', 'main.js')) ? { path: args.path, namespace: 'esm-only' } : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: 'esm-only' }, (args) => ({
          contents: `throw new Error(${JSON.stringify(`${args.path} runs from the ESM modules (bin/mend.js), not the bundle`)});`,
          loader: 'js',
        }));
      },
    },
  ],
});
// Dynamic import() of the ESM-only externals goes through bin/mend.js's own import():
// on Node 20 a function restored from a V8 code cache made in another process loses
// vm.Script's dynamic-import callback ("A dynamic import callback was not specified").
// Non-ASCII characters (a few, in comments esbuild keeps) as \u escapes: an ASCII bundle is
// read as latin1 by bin/mend.js, a plain copy where UTF-8 decoding took 20 ms a start.
const bundled = readFileSync(outfile, 'utf8')
  .replace(/\bimport\(("[^"]+")\)/g, '__mendImport($1)')
  .replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
if (/[^\x00-\x7f]/.test(bundled)) throw new Error('bundle-cli: the bundle must be ASCII (bin/mend.js reads it as latin1)');
if (/\bimport\("/.test(bundled)) throw new Error('bundle-cli: a dynamic import() is left in the bundle');
// Written already wrapped as node wraps a CommonJS module (Module.wrap), so that bin/mend.js
// compiles the file's own string: wrapping it at start-up made a second copy of the whole
// source (a young-generation allocation the size of the bundle, one scavenge more).
writeFileSync(outfile, `${Module.wrap(bundled)}\n`);
rmSync(`${outfile}.cache`, { force: true });

// Seed the code cache: bin/mend.js writes it after the first run that finds none.
const home = realpathSync(mkdtempSync(join(tmpdir(), 'mend-bundle-seed-')));
try {
  const project = join(home, 'project');
  mkdirSync(project);
  const sessionId = '6f1d2c3b-4a5e-4f70-8a9b-0c1d2e3f4a5b';
  const path = sessionLogPath(home, project, sessionId);
  mkdirSync(dirname(path), { recursive: true });
  const base = { sessionId, timestamp: '2026-01-05T09:00:00.000Z', cwd: project, version: 'mend/0.1.0' };
  writeFileSync(
    path,
    [
      { ...base, uuid: 'u1', parentUuid: null, type: 'user', message: { role: 'user', parts: [{ text: 'list the files' }] } },
      {
        ...base,
        uuid: 'a1',
        parentUuid: 'u1',
        type: 'assistant',
        message: { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'run_shell_command', args: { command: 'ls' } } }] },
      },
    ]
      .map((r) => `${JSON.stringify(r)}\n`)
      .join(''),
  );
  const run = spawnSync(process.execPath, [join(root, 'bin', 'mend.js'), '--resume', sessionId, '-o', 'stream-json'], {
    cwd: project,
    env: { ...process.env, MEND_HOME: home },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`seeding the code cache failed (${run.status}): ${run.stderr}`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
