#!/usr/bin/env node
/**
 * The CLI entry. Runs the bundled CLI (dist/cli/mend.cjs, built by `npm run build`, see
 * scripts/bundle-cli.ts) through vm.Script with a V8 code cache when it exists, else
 * the ESM modules. The bundle serves the headless, stream-json and command paths,
 * where start-up counts; the interactive and protocol front ends (a terminal UI on a
 * TTY, --acp, serve) import ESM-only packages a CommonJS bundle cannot require, so
 * they run from the ESM modules. MEND_NO_BUNDLE=1 forces the ESM modules, and so does
 * a bundle older than dist/src (tsc without `npm run build`).
 *
 * This file is CommonJS (bin/package.json): an ESM entry made node start its ESM loader
 * before anything else, ~20 ms of every start-up (issue 11).
 */
const { readFileSync, renameSync, statSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { isatty } = require('node:tty');
const vm = require('node:vm');

const argv = process.argv.slice(2);
// isatty rather than process.stdin.isTTY: asking the fds creates no stdin stream.
const interactive = isatty(0) && isatty(1);
// Any 'serve' word (a command after global options, or just a prompt's text) takes the ESM path: always correct, at worst slower.
const useBundle = process.env.MEND_NO_BUNDLE !== '1' && !interactive && !argv.some((a) => a === '--acp' || a.startsWith('--acp=')) && !argv.includes('serve');

async function bundledMain() {
  const filename = join(__dirname, '..', 'dist', 'cli', 'mend.cjs');
  let code;
  try {
    // A bundle older than the compiled modules is stale (tsc ran without the bundle step,
    // and tsc rewrites every output): the modules are then the truth.
    const bundled = statSync(filename).mtimeMs;
    const compiled = statSync(join(__dirname, '..', 'dist', 'src', 'cli', 'main.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (compiled > bundled) return null;
    // ASCII (scripts/bundle-cli.ts makes sure): latin1 is a plain copy, utf8 a slower decode.
    code = readFileSync(filename, 'latin1');
  } catch {
    return null;
  }
  const cachePath = `${filename}.cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cachePath);
  } catch {
    cachedData = undefined;
  }
  // The bundle's dynamic imports (openai, execa: ESM-only packages) come back here (see scripts/bundle-cli.ts).
  globalThis[Symbol.for('mend.import')] = (specifier) => import(specifier);
  // The file is the module already wrapped (scripts/bundle-cli.ts): compiled as it is read.
  const script = new vm.Script(code, { filename, cachedData });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(filename), module, filename, dirname(filename));
  const saveCache = () => {
    if (cachedData !== undefined && !script.cachedDataRejected) return;
    // Best effort (the install may be read-only); after the run, so the functions it compiled are in it.
    try {
      const tmp = `${cachePath}.${process.pid}`;
      writeFileSync(tmp, script.createCachedData());
      renameSync(tmp, cachePath);
    } catch {
      // Without a cache the next start compiles again; nothing else changes.
    }
  };
  return { main: module.exports.main, saveCache };
}

(async () => {
  const bundled = useBundle ? await bundledMain() : null;
  if (bundled) {
    process.exitCode = await bundled.main(argv);
    bundled.saveCache();
  } else {
    const { main } = await import(pathToFileURL(join(__dirname, '..', 'dist', 'src', 'cli', 'main.js')).href);
    process.exitCode = await main(argv);
  }
})();
