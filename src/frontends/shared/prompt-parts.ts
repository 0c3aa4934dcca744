/**
 * ACP prompt blocks -> the parts of a user record: the one conversion for every
 * route that takes ACP blocks (ACP's `session/prompt`, the daemon's prompt route).
 * Text (whitespace-only text carries nothing, the rule of `-p` and stream-json),
 * links, embedded resources and images; audio is said to be left out.
 */
import type { Part } from '../../session/records.js';
import type { PromptBlock } from '../../wire/prompt-blocks.js';

export function promptParts(blocks: readonly PromptBlock[]): Part[] {
  const parts: Part[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        if (typeof block.text === 'string' && block.text.trim() !== '') parts.push({ text: block.text });
        break;
      case 'resource_link':
        if (typeof block.uri === 'string') parts.push({ text: `[${block.title ?? block.name ?? block.uri}](${block.uri})` });
        break;
      case 'resource': {
        const resource = block.resource;
        if (!resource) break;
        parts.push({
          text: typeof resource.text === 'string' ? `<context uri="${resource.uri}">\n${resource.text}\n</context>` : `[binary resource](${resource.uri})`,
        });
        break;
      }
      case 'image':
        if (typeof block.mimeType === 'string' && typeof block.data === 'string' && block.data !== '') {
          parts.push({ inlineData: { mimeType: block.mimeType, data: block.data } } as Part);
        }
        break;
      case 'audio':
        parts.push({ text: '[audio clip: not supported, left out]' });
        break;
    }
  }
  return parts;
}

/** The text of a prompt that is only text (ACP's `/continue` and `/plan`), or null. */
export function promptCommand(blocks: readonly PromptBlock[]): string | null {
  if (blocks.length === 0 || blocks.some((b) => b.type !== 'text')) return null;
  return blocks
    .map((b) => b.text ?? '')
    .join('')
    .trim();
}
