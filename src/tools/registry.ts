/** The built-in tools, looked up by the name the model calls them by. */
import type { ToolDeclaration } from '../providers/provider.js';
import { editTool } from './edit-tool.js';
import { globTool } from './glob-tool.js';
import { grepSearchTool } from './grep-tool.js';
import { listDirectoryTool } from './list-directory-tool.js';
import { readFileTool } from './read-file-tool.js';
import { shellTool } from './shell-tool.js';
import type { Tool } from './tool.js';
import { writeFileTool } from './write-file-tool.js';

export interface ToolRegistry {
  get(name: string): Tool | undefined;
  has(name: string): boolean;
  /** In declaration order. */
  list(): Tool[];
  names(): string[];
  /** What the provider declares to the model. */
  declarations(): ToolDeclaration[];
}

export function builtinTools(): Tool[] {
  return [readFileTool, listDirectoryTool, globTool, grepSearchTool, writeFileTool, editTool, shellTool];
}

/** `tools` defaults to the built-ins; tests and embedders can pass their own set. */
export function createToolRegistry(tools: readonly Tool[] = builtinTools()): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`duplicate tool name: ${tool.name}`);
    byName.set(tool.name, tool);
  }
  return {
    get: (name) => byName.get(name),
    has: (name) => byName.has(name),
    list: () => [...byName.values()],
    names: () => [...byName.keys()],
    declarations: () => [...byName.values()].map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })),
  };
}
