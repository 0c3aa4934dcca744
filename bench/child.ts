/**
 * One measurement in a fresh process: `node dist/bench/child.js MODE FILE`.
 *
 *   floor     read the file in 1 MiB chunks, split lines, JSON.parse every line and
 *             keep the objects in an array: the least any loader has to do.
 *   read      readSessionLog only (read + validate + fragment merge).
 *   loadplan  loadSession + buildSessionRecoveryPlan: the full load every resume did
 *             before the outline reader, and what a continuation's history costs that way.
 *   continue  on-demand histories: the outline pass, the
 *             plan from it (planFromOutline), then the histories read on demand
 *             (plan.apiHistory, plan.originalApiHistory, the conversation's records).
 *
 * Modules are imported before the clock starts (start-up is measured by the CLI
 * benchmark). Prints one JSON line: wall and CPU time of the work, time spent in
 * GC, and the process's peak RSS (process.resourceUsage().maxRSS).
 */
import { createReadStream } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';

type Mode = 'floor' | 'read' | 'loadplan' | 'continue';

/** Keeps results reachable until the peak RSS has been taken. */
const keep: unknown[] = [];

async function floor(path: string): Promise<{ count: number }> {
  const values: unknown[] = [];
  let pending: Buffer | null = null;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    const last = chunk.lastIndexOf(0x0a);
    if (last === -1) {
      pending = pending ? Buffer.concat([pending, chunk]) : chunk;
      continue;
    }
    const head = chunk.subarray(0, last + 1);
    const block = (pending ? Buffer.concat([pending, head]) : head).toString('utf8');
    pending = last + 1 < chunk.length ? chunk.subarray(last + 1) : null;
    let start = 0;
    for (let nl = block.indexOf('\n'); nl !== -1; nl = block.indexOf('\n', start)) {
      if (nl > start) values.push(JSON.parse(block.slice(start, nl)));
      start = nl + 1;
    }
  }
  if (pending && pending.length > 0) values.push(JSON.parse(pending.toString('utf8')));
  keep.push(values);
  return { count: values.length };
}

async function main(): Promise<void> {
  const [mode, path] = process.argv.slice(2) as [Mode, string];
  if (!path || !['floor', 'read', 'loadplan', 'continue'].includes(mode)) throw new Error('usage: child.js floor|read|loadplan|continue FILE');

  // Imported up front so that the clock measures the work, not module loading.
  const { readSessionLog } = await import('../src/session/log-reader.js');
  const { loadSession } = await import('../src/session/session-loader.js');
  const { buildPlanForSession } = await import('../src/recovery/build-plan.js');
  const { readSessionOutlineAt } = await import('../src/session/outline/outline-reader.js');
  const { planFromOutline } = await import('../src/runtime/outline-plan.js');
  const { basename } = await import('node:path');

  let gcMs = 0;
  let gcCount = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcMs += e.duration;
      gcCount++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const info: Record<string, unknown> = {};
  if (mode === 'floor') {
    info['records'] = (await floor(path)).count;
  } else if (mode === 'read') {
    const read = await readSessionLog(path);
    keep.push(read);
    info['records'] = read.records.length;
  } else if (mode === 'continue') {
    const outline = await readSessionOutlineAt(path);
    const stem = basename(path, '.jsonl');
    const head = planFromOutline(outline, { fallbackSessionId: stem }, {}, null);
    const tPlanned = performance.now();
    // What a continuation then reads by an explicit call (SessionRuntime.loadHistory): the
    // whole session, for the history it sends and the records a replay shows.
    const loaded = await loadSession(path);
    const plan = buildPlanForSession(loaded);
    info['apiEntries'] = plan.apiHistory.length;
    info['originalEntries'] = plan.originalApiHistory.length;
    info['records'] = loaded.conversation.records.length;
    info['samePlan'] = plan.planId === head.plan.planId;
    keep.push(head, loaded, plan);
    info['planMs'] = tPlanned - t0;
    info['historyMs'] = performance.now() - tPlanned;
    info['kind'] = plan.kind;
    info['planId'] = plan.planId;
  } else {
    const loaded = await loadSession(path);
    const tLoaded = performance.now();
    const cpuLoaded = process.cpuUsage(cpu0);
    const plan = buildPlanForSession(loaded);
    keep.push(loaded, plan);
    info['records'] = loaded.conversation.totalRecords;
    info['loadMs'] = tLoaded - t0;
    info['planMs'] = performance.now() - tLoaded;
    const cpuPlanned = process.cpuUsage(cpu0);
    info['loadCpuMs'] = (cpuLoaded.user + cpuLoaded.system) / 1000;
    info['planCpuMs'] = (cpuPlanned.user + cpuPlanned.system - cpuLoaded.user - cpuLoaded.system) / 1000;
    info['kind'] = plan.kind;
    info['planId'] = plan.planId;
    info['apiEntries'] = plan.apiHistory.length;
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  for (const e of observer.takeRecords()) {
    gcMs += e.duration;
    gcCount++;
  }
  observer.disconnect();
  const usage = process.resourceUsage();
  process.stdout.write(
    `${JSON.stringify({
      mode,
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      userMs: cpu.user / 1000,
      systemMs: cpu.system / 1000,
      gcMs,
      gcCount,
      maxRssKb: usage.maxRSS,
      heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
      ...info,
    })}\n`,
  );
}

await main();
