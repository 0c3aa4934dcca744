/** The JSON Schema of the stream-json protocol, generated from the zod schemas (zod 4's z.toJSONSchema). */
import { z } from 'zod';
import * as control from './control.js';
import * as messages from './messages.js';

export function buildStreamJsonSchema(): Record<string, unknown> {
  const defs: Record<string, z.ZodType> = {
    SystemInitMessage: messages.SystemInitMessageSchema,
    SystemRecoveryMessage: messages.SystemRecoveryMessageSchema,
    SystemErrorMessage: messages.SystemErrorMessageSchema,
    SystemWarningMessage: messages.SystemWarningMessageSchema,
    AssistantMessage: messages.AssistantMessageSchema,
    UserMessage: messages.UserMessageSchema,
    StreamEventMessage: messages.StreamEventMessageSchema,
    ResultMessage: messages.ResultMessageSchema,
    InputUserMessage: control.InputUserMessageSchema,
    ControlRequest: control.ControlRequestEnvelopeSchema,
    HostControlRequest: control.HostControlRequestSchema,
    CliControlRequest: control.CliControlRequestSchema,
    ControlResponseMessage: control.ControlResponseMessageSchema,
    ControlCancelRequest: control.ControlCancelRequestSchema,
    PermissionResult: control.PermissionResultSchema,
    ContinueLastTurnAnswer: control.ContinueLastTurnAnswerSchema,
    InitializeAnswer: control.InitializeAnswerSchema,
    RecoverySummary: messages.RecoverySummarySchema,
  };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'mend stream-json protocol',
    description: 'Every line mend writes to stdout or reads from stdin with --output-format / --input-format stream-json.',
    $defs: Object.fromEntries(Object.entries(defs).map(([name, schema]) => [name, z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })])),
  };
}
