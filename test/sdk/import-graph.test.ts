/**
 * The SDK must stay a thin client: following its imports transitively reaches only
 * src/sdk and src/stream (plus node built-ins and npm packages), never the engine,
 * providers, tools, session, recovery or CLI code.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SDK_DIR = join(ROOT, 'src/sdk');
const ALLOWED = ['src/sdk/', 'src/stream/'];

/** Every module specifier: static imports/exports (also `import type`, side-effect imports) and dynamic import(). */
export function specifiersOf(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const found: string[] = [];
  const patterns = [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const re of patterns) for (const m of code.matchAll(re)) found.push(m[1]!);
  return found;
}

function resolveLocal(fromFile: string, spec: string): string {
  const target = resolve(dirname(fromFile), spec);
  const candidates = [target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts'), target, `${target}.ts`, join(target, 'index.ts')];
  const hit = candidates.find((c) => existsSync(c) && !c.endsWith('/'));
  if (!hit) throw new Error(`${relative(ROOT, fromFile)} imports ${spec}, which does not resolve`);
  return hit;
}

function walk(entries: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const todo = [...entries];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (graph.has(file)) continue;
    const deps = specifiersOf(readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.') || s.startsWith('/'))
      .map((s) => resolveLocal(file, s));
    graph.set(file, deps);
    todo.push(...deps);
  }
  return graph;
}

describe('SDK import graph', () => {
  it('finds every kind of specifier', () => {
    expect(
      specifiersOf(`import a from './a.js';\nimport type { B } from "../b.js";\nexport * from './c.js';\nimport './d.js';\nconst e = await import('./e.js');\n// import x from './comment.js'\n/* import y from './block.js' */`),
    ).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js']);
  });

  it('reaches only src/sdk and src/stream', () => {
    const entries = readdirSync(SDK_DIR)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(SDK_DIR, f));
    expect(entries.map((f) => relative(ROOT, f))).toContain('src/sdk/index.ts');
    const graph = walk(entries);
    const outside = [...graph.keys()].map((f) => relative(ROOT, f)).filter((f) => !ALLOWED.some((dir) => f.startsWith(dir)));
    const edges = [...graph].flatMap(([from, deps]) =>
      deps.filter((d) => outside.includes(relative(ROOT, d))).map((d) => `${relative(ROOT, from)} -> ${relative(ROOT, d)}`),
    );
    expect(edges).toEqual([]);
    expect(outside).toEqual([]);
    // It does reach src/stream (the shared schemas), so the walk really follows imports.
    expect([...graph.keys()].map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['src/stream/messages.ts', 'src/stream/control.ts', 'src/stream/line-framer.ts']));
  });
});
