/**
 * What the model reads when its arguments for a call were not valid JSON (or were over
 * the size cap). Running the tool with `{}` instead would either fail confusingly or,
 * worse, do something with defaults; telling the model what was wrong lets it retry.
 */
import { ToolErrorType, errorOutcome, type ToolOutcome } from './tool.js';

/** How much of the raw text the model is shown back: enough to spot the mistake. */
export const INVALID_ARGS_ECHO_CHARS = 1000;

export function invalidArgsMessage(toolName: string, invalid: { raw: string; reason: string }): string {
  const raw =
    invalid.raw.length > INVALID_ARGS_ECHO_CHARS
      ? `${invalid.raw.slice(0, INVALID_ARGS_ECHO_CHARS)}... [${invalid.raw.length - INVALID_ARGS_ECHO_CHARS} more characters]`
      : invalid.raw;
  return `Your arguments for ${toolName} were not valid JSON (${invalid.reason}): ${raw}; call it again with a JSON object.`;
}

/** The error outcome for such a call; the tool is not run. */
export function invalidArgsOutcome(toolName: string, invalid: { raw: string; reason: string }): ToolOutcome {
  return errorOutcome(invalidArgsMessage(toolName, invalid), ToolErrorType.invalidParams);
}
