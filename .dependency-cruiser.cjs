/**
 * Layering and cycle rules, checked in `npm test` (test/architecture/layers.test.ts).
 * TypeScript 7 has no compiler API, so modules are parsed with @swc/core.
 * Layers, inward: session/store, recovery, providers, tools, engine, runtime,
 * frontends (with their mappers), cli; the SDK beside them. src/wire (the wire vocabulary of
 * stream-json, the daemon and ACP) is the ground floor: it imports nothing of mend.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'No import cycles anywhere in src (a dynamic import() hides one only from people, not from this rule).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'recovery-is-pure',
      severity: 'error',
      comment: 'The planner imports only itself and the pure parts of src/session: no I/O, no clock, no randomness.',
      from: { path: '^src/recovery/' },
      to: {
        pathNot: [
          '^src/recovery/',
          '^src/session/(records|conversation|api-history|active-writer|model-entry|parts-shape)\\.ts$',
          '^src/wire/mcp-names\\.ts$',
          '^node_modules/zod/',
          '^crypto$|^node:crypto$',
        ],
      },
    },
    {
      name: 'outline-wing-behind-its-interface',
      severity: 'error',
      comment:
        'The fast reader (src/session/outline, README.md there) is reached only through its one interface, history-reader.ts: nothing outside the wing depends on how it reads.',
      from: { path: '^src/', pathNot: '^src/session/outline/' },
      to: { path: '^src/session/outline/', pathNot: '^src/session/outline/history-reader\\.ts$' },
    },
    {
      name: 'plan-checkpoints-behind-their-interface',
      severity: 'error',
      comment:
        'Plan checkpoints (src/runtime/checkpoint) are reached only through plan-checkpoints.ts: nothing outside the folder depends on what a checkpoint holds.',
      from: { path: '^src/', pathNot: '^src/runtime/checkpoint/' },
      to: { path: '^src/runtime/checkpoint/', pathNot: '^src/runtime/checkpoint/plan-checkpoints\\.ts$' },
    },
    {
      name: 'pg-checkpoint-rows-behind-the-store',
      severity: 'error',
      comment:
        'The SQL of plan checkpoint rows (src/store/postgres/pg-checkpoints.ts) is reached only by the PostgreSQL store: the checkpoint wing sees a RowCheckpointSlot (src/store/session-store.ts), never SQL.',
      from: { path: '^src/', pathNot: '^src/store/postgres/pg-store\\.ts$' },
      to: { path: '^src/store/postgres/pg-checkpoints\\.ts$' },
    },
    {
      name: 'sdk-reaches-only-sdk-and-wire',
      severity: 'error',
      comment: 'The SDK ships to hosts: it may depend on src/sdk and the wire schemas of src/wire, never on the CLI internals (transitively).',
      from: { path: '^src/sdk/' },
      to: { path: '^src/(?!sdk/|wire/)', reachable: true },
    },
    {
      name: 'engine-does-not-speak-wire',
      severity: 'error',
      comment: 'The engine emits domain events; wire schemas and mappings belong to src/wire at the edge.',
      from: { path: '^src/(engine|runtime|recovery|session|store|tools|providers|foreign)/' },
      to: { path: '^src/wire/(messages|control|line-framer|json-schema|daemon-api|daemon-events|acp-extensions|result-lines)' },
    },
    {
      name: 'wire-is-the-ground-floor',
      severity: 'error',
      comment: 'The wire vocabulary (schemas, codes, names) imports nothing of mend but itself, so every layer may stand on it.',
      from: { path: '^src/wire/' },
      to: { path: '^src/(?!wire/)' },
    },
    {
      name: 'inner-layers-do-not-reach-out',
      severity: 'error',
      comment: 'Inner layers never import the runtime, front ends, the CLI or the SDK.',
      from: { path: '^src/(session|store|recovery|providers|tools|engine|foreign)/' },
      to: { path: '^src/(runtime|frontends|cli|sdk)/' },
    },
    {
      name: 'runtime-stays-inside',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: '^src/(frontends|cli|sdk)/' },
    },
    {
      name: 'front-ends-use-the-runtime-not-a-store',
      severity: 'error',
      comment: 'A front end reaches storage only through SessionRuntime and the SessionStore interface.',
      from: { path: '^src/frontends/' },
      to: { path: '^src/store/(?!session-store\\.ts$)|^src/session/(log-writer|session-lock|log-reader)\\.ts$' },
    },
    {
      name: 'nothing-imports-a-front-end',
      severity: 'error',
      comment: 'Front ends are leaves: only the composition root (src/cli) loads them; shared front-end code lives in src/frontends/shared.',
      from: { path: '^src/(?!cli/|frontends/)' },
      to: { path: '^src/frontends/(?!shared/)' },
    },
    {
      name: 'front-ends-do-not-import-each-other',
      severity: 'error',
      from: { path: '^src/frontends/([^/]+)/' },
      to: { path: '^src/frontends/(?!shared/)[^/]+/', pathNot: '^src/frontends/$1/' },
    },
    {
      name: 'only-front-ends-use-front-end-shared',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(frontends|cli)/' },
      to: { path: '^src/frontends/shared/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/|^node_modules/zod/',
    parser: 'swc',
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
    moduleSystems: ['es6', 'cjs'],
  },
};
