/**
 * Module loader hooks for the start-up check: every resolved module URL is
 * appended to the file named by BENCH_TRACE_OUT. Registered by trace-register.js
 * (`node --import ./dist/bench/trace-register.js bin/mend.js ...`); the hooks run
 * on the loader thread, which sees static and dynamic imports of the main thread.
 */
import { appendFileSync } from 'node:fs';

type Resolve = (specifier: string, context: unknown) => Promise<{ url: string }>;

export async function resolve(specifier: string, context: unknown, next: Resolve): Promise<{ url: string }> {
  const result = await next(specifier, context);
  const out = process.env['BENCH_TRACE_OUT'];
  if (out) appendFileSync(out, `${result.url}\n`);
  return result;
}
