/**
 * What a tool is, and the one way tools are built (`defineTool`), so that every tool
 * validates its arguments the same way and never throws at the engine: a bad call from
 * the model is an outcome the model can read and correct.
 */
import { z } from 'zod';
import { redactSecretValues } from './tool-env.js';

export type ToolKind = 'read' | 'edit' | 'execute';

export interface ToolContext {
  /** Working directory of the session; the default directory for shell commands. */
  cwd: string;
  signal: AbortSignal;
  /** Byte limit for what a tool returns to the model. */
  outputCap: number;
  /** Relative paths resolve against it, and file tools are confined to it. Default: `cwd`. */
  projectRoot?: string;
  /** Further directories file tools may use besides the project root (`--add-dir`). Default: none. */
  roots?: string[];
  /** The whole environment of shell commands (see toolEnvironment). Default: process.env, scrubbed. */
  env?: Record<string, string>;
  /** Values redacted from every outcome before it is returned (see secretValues). */
  secrets?: string[];
  /** How a foreground shell command runs; default inline (the daemon: in a helper process, shell-run/). */
  runShell?: ShellRunner;
}

/** What a foreground call needs, as plain data (it may cross to a helper process). */
export interface ForegroundCommand {
  command: string;
  directory: string;
  /** The command's whole environment. */
  env: Record<string, string>;
  timeoutMs: number;
  /** Byte limit of the output kept. */
  outputCap: number;
}

/** How a foreground command runs: shell-run/foreground-command.ts's runForegroundCommand, or the same in a helper process. */
export type ShellRunner = (run: ForegroundCommand, signal: AbortSignal) => Promise<ToolOutcome>;

export interface ToolOutcome {
  /** What the model sees. */
  output: string;
  isError: boolean;
  /** Short human-facing summary, when it differs from `output`. */
  display?: string;
  /** Stable category of failure; Qwen Code's ToolErrorType strings where one exists. */
  errorType?: string;
  /** Recorded with the result beside `output` (an MCP result's content blocks and structured content); not sent as text. */
  details?: Record<string, unknown>;
}

/** Where a tool that is not built in comes from: an MCP server (approval rules differ, see approval.ts). */
export interface McpToolOrigin {
  server: string;
  /** The tool's name on its server. */
  tool: string;
  /** The server's `annotations.readOnlyHint`: the only MCP tools plan mode runs. */
  readOnly: boolean;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  /** JSON schema of the arguments, as declared to the model. */
  readonly parameters: Record<string, unknown>;
  readonly kind: ToolKind;
  readonly argsSchema: z.ZodType;
  /** Set for MCP tools. */
  readonly mcp?: McpToolOrigin;
  /** Takes the raw arguments from the model; validation failures come back as error outcomes. */
  execute(args: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}

export const DEFAULT_OUTPUT_CAP = 64 * 1024;

export const ToolErrorType = {
  invalidParams: 'invalid_tool_params',
  unhandled: 'unhandled_exception',
  fileNotFound: 'file_not_found',
  targetIsDirectory: 'target_is_directory',
  pathIsNotDirectory: 'path_is_not_a_directory',
  fileTooLarge: 'file_too_large',
  readFailure: 'read_content_failure',
  writeFailure: 'file_write_failure',
  createExistingFile: 'attempt_to_create_existing_file',
  editNoOccurrence: 'edit_no_occurrence_found',
  editOccurrenceMismatch: 'edit_expected_occurrence_mismatch',
  editNoChange: 'edit_no_change',
  listFailure: 'ls_execution_error',
  shellFailure: 'shell_execute_error',
  shellTimeout: 'shell_timeout',
  aborted: 'aborted',
  pathNotInWorkspace: 'path_not_in_workspace',
  notRegularFile: 'not_a_regular_file',
  globFailure: 'glob_execution_error',
  grepFailure: 'grep_execution_error',
} as const;

/**
 * A path argument: absolute, or relative to the project root (resolved by resolveToolPath).
 * The system prompt tells the model the root, so both forms are unambiguous.
 */
export const toolPath = z.string().min(1);

export function errorOutcome(output: string, errorType: string, display?: string): ToolOutcome {
  return { output, isError: true, errorType, ...(display === undefined ? {} : { display }) };
}

export interface ToolSpec<S extends z.ZodType> {
  name: string;
  description: string;
  kind: ToolKind;
  argsSchema: S;
  run(args: z.output<S>, ctx: ToolContext): Promise<ToolOutcome>;
}

export function defineTool<S extends z.ZodType>(spec: ToolSpec<S>): Tool {
  let parameters: Record<string, unknown> | undefined;
  return {
    name: spec.name,
    description: spec.description,
    kind: spec.kind,
    argsSchema: spec.argsSchema,
    // Derived from the zod schema so the declaration and the validation cannot drift apart.
    get parameters() {
      parameters ??= jsonSchemaOf(spec.argsSchema);
      return parameters;
    },
    async execute(args, ctx) {
      // Here, not in each tool: whatever a tool returns is logged and sent, so no path around it may exist.
      return redactOutcome(await runValidated(spec, args, ctx), ctx.secrets);
    },
  };
}

async function runValidated<S extends z.ZodType>(spec: ToolSpec<S>, args: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  const parsed = spec.argsSchema.safeParse(dropNulls(args));
  if (!parsed.success) {
    return errorOutcome(`Invalid arguments for ${spec.name}: ${formatIssues(parsed.error)}`, ToolErrorType.invalidParams);
  }
  try {
    return await spec.run(parsed.data, { ...ctx, outputCap: validCap(ctx.outputCap) });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return errorOutcome(`${spec.name} failed: ${message}`, ToolErrorType.unhandled);
  }
}

function redactOutcome(outcome: ToolOutcome, secrets: readonly string[] | undefined): ToolOutcome {
  if (!secrets || secrets.length === 0) return outcome;
  return {
    ...outcome,
    output: redactSecretValues(outcome.output, secrets),
    ...(outcome.display === undefined ? {} : { display: redactSecretValues(outcome.display, secrets) }),
  };
}

/** Models often send `"offset": null` for "not given"; treating that as absent beats rejecting the call. */
function dropNulls(args: unknown): unknown {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return args;
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message)).join('; ');
}

function validCap(cap: number): number {
  return Number.isFinite(cap) && cap > 0 ? Math.floor(cap) : DEFAULT_OUTPUT_CAP;
}

export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    override: (ctx) => {
      // zod adds the safe-integer range to every int; it is noise in a model's tool declaration.
      const node = ctx.jsonSchema as Record<string, unknown>;
      if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
      if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
    },
  }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
