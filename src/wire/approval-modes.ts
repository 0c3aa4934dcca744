/**
 * Approval modes: the one source. mend's own names are Qwen Code's; other hosts
 * speak other vocabularies (Claude's permission modes, ACP mode ids), mapped
 * through the one alias table below. Pure and zod-only, so the SDK may use it.
 */
import { z } from 'zod';

export const APPROVAL_MODES = ['default', 'auto-edit', 'yolo', 'plan'] as const;
export const ApprovalModeSchema = z.enum(APPROVAL_MODES);
export type ApprovalMode = z.infer<typeof ApprovalModeSchema>;

/** Host vocabulary -> mend mode. mend's and ACP's ids are the same strings. */
export const APPROVAL_MODE_ALIASES: Readonly<Record<string, ApprovalMode>> = {
  default: 'default',
  'auto-edit': 'auto-edit',
  yolo: 'yolo',
  plan: 'plan',
  // Claude Code's permission modes.
  acceptEdits: 'auto-edit',
  bypassPermissions: 'yolo',
  // "Don't ask": what is not pre-approved is denied. mend's default mode with nobody asked does
  // exactly that; the stream-json front end stops asking the host while this name is in force.
  dontAsk: 'default',
};

/**
 * Host names mend refuses: Claude's `auto` lets a classifier approve calls, and mend has no
 * classifier (mapping it to yolo would run what the host meant to have judged).
 */
export const REFUSED_APPROVAL_MODES: Readonly<Record<string, string>> = {
  auto: '"auto" (approvals decided by a classifier) is not supported: mend has no classifier; use acceptEdits, bypassPermissions or default with canUseTool',
};

/** The name under which a host never wants to be asked (Claude's dontAsk). */
export const NEVER_ASK_MODE = 'dontAsk';

/** The mend mode a host's name stands for, or undefined when the name means nothing here. */
export function approvalModeFromAlias(name: string): ApprovalMode | undefined {
  return Object.hasOwn(APPROVAL_MODE_ALIASES, name) ? APPROVAL_MODE_ALIASES[name] : undefined;
}

/** Higher is stricter: plan runs nothing that changes state, yolo runs everything. */
export const APPROVAL_MODE_STRICTNESS: Readonly<Record<ApprovalMode, number>> = { yolo: 0, 'auto-edit': 1, default: 2, plan: 3 };

export const APPROVAL_MODE_DESCRIPTIONS: Readonly<Record<ApprovalMode, string>> = {
  default: 'ask before anything that changes state',
  'auto-edit': 'file edits run without asking; shell commands ask',
  yolo: 'everything runs without asking',
  plan: 'read-only: nothing that changes state runs',
};

/** Claude Code's name for a mode (its `permissionMode` fields); `name` is the caller's word, kept when it is Claude's. */
export function claudePermissionMode(mode: ApprovalMode, name?: string): string {
  if (name === NEVER_ASK_MODE) return NEVER_ASK_MODE;
  return { default: 'default', 'auto-edit': 'acceptEdits', yolo: 'bypassPermissions', plan: 'plan' }[mode];
}
