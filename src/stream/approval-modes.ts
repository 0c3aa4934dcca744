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
};

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
