import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decideApproval, type ApprovalVerdict, type ApprovalMode } from '../../src/tools/approval.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { defineTool, type ToolKind } from '../../src/tools/tool.js';
import { context } from './helpers.js';

describe('createToolRegistry', () => {
  it('offers the Qwen Code tool names with JSON-schema declarations', () => {
    const registry = createToolRegistry();
    expect(registry.names().sort()).toEqual(['edit', 'glob', 'grep_search', 'list_directory', 'read_file', 'run_shell_command', 'write_file']);
    expect(registry.get('edit')?.kind).toBe('edit');
    expect(registry.get('run_shell_command')?.kind).toBe('execute');
    expect(registry.get('read_file')?.kind).toBe('read');
    expect(registry.get('glob')?.kind).toBe('read');
    expect(registry.get('grep_search')?.kind).toBe('read');
    expect(registry.declarations().find((d) => d.name === 'grep_search')?.parameters).toMatchObject({
      required: ['pattern'],
      properties: { pattern: { type: 'string' }, glob: { type: 'string' }, path: { type: 'string' }, limit: { type: 'integer' } },
    });
    expect(registry.declarations().find((d) => d.name === 'glob')?.parameters).toMatchObject({
      required: ['pattern'],
      properties: { pattern: { type: 'string' }, path: { type: 'string' } },
    });
    expect(registry.get('nope')).toBeUndefined();
    const shell = registry.declarations().find((d) => d.name === 'run_shell_command');
    expect(shell?.parameters).toMatchObject({
      type: 'object',
      required: ['command'],
      properties: {
        command: { type: 'string' },
        description: { type: 'string' },
        directory: { type: 'string' },
        timeout: { type: 'integer' },
        is_background: { type: 'boolean' },
      },
    });
    expect(shell?.parameters).not.toHaveProperty('$schema');
    const read = registry.declarations().find((d) => d.name === 'read_file');
    expect(read?.parameters).toMatchObject({ required: ['file_path'], properties: { offset: { type: 'integer', minimum: 0 } } });
    expect(JSON.stringify(read?.parameters)).not.toContain(String(Number.MAX_SAFE_INTEGER));
  });
});

describe('defineTool', () => {
  it('turns thrown errors and invalid arguments into error outcomes', async () => {
    const tool = defineTool({
      name: 'boom',
      description: 'throws',
      kind: 'read',
      argsSchema: z.object({ n: z.number() }),
      run: async () => {
        throw new Error('kaput');
      },
    });
    expect(await tool.execute({ n: 1 }, context('/'))).toEqual({ output: 'boom failed: kaput', isError: true, errorType: 'unhandled_exception' });
    expect(await tool.execute(undefined, context('/'))).toMatchObject({ isError: true, errorType: 'invalid_tool_params' });
    expect((await tool.execute({ n: 'one' }, context('/'))).output).toMatch(/^Invalid arguments for boom: n: /);
  });
});

describe('decideApproval', () => {
  const kinds: ToolKind[] = ['read', 'edit', 'execute'];
  const table: Record<ApprovalMode, Record<ToolKind, ApprovalVerdict>> = {
    default: { read: 'allow', edit: 'ask', execute: 'ask' },
    'auto-edit': { read: 'allow', edit: 'allow', execute: 'ask' },
    yolo: { read: 'allow', edit: 'allow', execute: 'allow' },
    plan: { read: 'allow', edit: 'deny', execute: 'deny' },
  };
  // With the tool named in allowedTools: allowed everywhere except plan, which stays read-only.
  const allowedTable: Record<ApprovalMode, Record<ToolKind, ApprovalVerdict>> = {
    default: { read: 'allow', edit: 'allow', execute: 'allow' },
    'auto-edit': { read: 'allow', edit: 'allow', execute: 'allow' },
    yolo: { read: 'allow', edit: 'allow', execute: 'allow' },
    plan: { read: 'allow', edit: 'deny', execute: 'deny' },
  };

  for (const mode of Object.keys(table) as ApprovalMode[]) {
    for (const kind of kinds) {
      it(`${mode} x ${kind}`, () => {
        const tool = { name: `t_${kind}`, kind };
        expect(decideApproval(tool, mode, [])).toBe(table[mode][kind]);
        expect(decideApproval(tool, mode, [tool.name])).toBe(allowedTable[mode][kind]);
        // Naming a different tool changes nothing.
        expect(decideApproval(tool, mode, ['other'])).toBe(table[mode][kind]);
      });
    }
  }
});
