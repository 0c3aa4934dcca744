/**
 * Checks one line read from the CLI against the schemas of src/wire. The value
 * itself is passed on as it was read: unknown types and system subtypes untouched,
 * a known type that fails its schema flagged with the issues (never dropped).
 */
import { z } from 'zod';
import { CliControlRequestSchema, ControlCancelRequestSchema, ControlRequestEnvelopeSchema, ControlResponseMessageSchema } from '../wire/control.js';
import {
  AssistantMessageSchema,
  ResultMessageSchema,
  StreamEventMessageSchema,
  SystemErrorMessageSchema,
  SystemInitMessageSchema,
  SystemRecoveryMessageSchema,
  SystemWarningMessageSchema,
  UserMessageSchema,
} from '../wire/messages.js';

const ISSUES = Symbol.for('mend.sdk.validationIssues');

/** Any JSON object with a string `type`. */
export type InboundMessage = { type: string; [key: string]: unknown };

/** The validation problems of a message that failed its schema, or undefined when it passed (or its type is unknown). */
export function validationIssues(message: object): string | undefined {
  return (message as { [ISSUES]?: string })[ISSUES];
}

const SYSTEM_SCHEMAS: Record<string, z.ZodType> = {
  init: SystemInitMessageSchema,
  recovery: SystemRecoveryMessageSchema,
  error: SystemErrorMessageSchema,
  warning: SystemWarningMessageSchema,
};

const TYPE_SCHEMAS: Record<string, z.ZodType> = {
  assistant: AssistantMessageSchema,
  user: UserMessageSchema,
  stream_event: StreamEventMessageSchema,
  result: ResultMessageSchema,
  control_response: ControlResponseMessageSchema,
  control_cancel_request: ControlCancelRequestSchema,
};

function schemaFor(m: InboundMessage): z.ZodType | undefined {
  if (m.type === 'system') return typeof m['subtype'] === 'string' ? SYSTEM_SCHEMAS[m['subtype']] : SystemInitMessageSchema;
  if (m.type === 'control_request') {
    const request = m['request'];
    const subtype = request && typeof request === 'object' ? (request as { subtype?: unknown }).subtype : undefined;
    return subtype === 'can_use_tool' || subtype === 'mcp_message' ? CliControlRequestSchema : ControlRequestEnvelopeSchema;
  }
  return Object.hasOwn(TYPE_SCHEMAS, m.type) ? TYPE_SCHEMAS[m.type] : undefined;
}

export function isInboundMessage(value: unknown): value is InboundMessage {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { type?: unknown }).type === 'string';
}

/** Validates in place: returns the same object, flagged when a known type fails its schema. */
export function checkMessage(m: InboundMessage): InboundMessage {
  const schema = schemaFor(m);
  if (!schema) return m;
  const parsed = schema.safeParse(m);
  if (!parsed.success) {
    Object.defineProperty(m, ISSUES, { value: z.prettifyError(parsed.error), enumerable: false });
  }
  return m;
}
