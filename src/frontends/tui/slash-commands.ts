/** The slash commands of the prompt line, parsed; unknown ones are reported, never sent to the model. */
export type SlashCommand =
  | { name: 'continue' }
  | { name: 'resume'; target: string | undefined }
  | { name: 'plan' }
  | { name: 'help' }
  | { name: 'clear' }
  | { name: 'model'; model: string | undefined }
  | { name: 'quit' }
  | { name: 'unknown'; text: string };

export const HELP_LINES = [
  '/continue       continue the interrupted turn the INFO item describes',
  '/resume [ID]    pick a session of this project (or resume ID)',
  '/plan           the full recovery plan of this session',
  '/clear          start a new session',
  '/model [NAME]   show or set the model',
  '/help           this help',
  '/quit           exit (also Ctrl-D on an empty prompt, Ctrl-C twice)',
  'Enter sends; "\\" then Enter or Ctrl-J adds a line; Up/Down: prompt history',
  'Shift+Tab cycles the approval mode; Ctrl-O shows/hides thoughts; Ctrl-C stops the turn',
];

/** null: not a command (a prompt). A "/" followed by a space or a path-like word is a prompt too. */
export function parseSlashCommand(text: string): SlashCommand | null {
  const trimmed = text.trim();
  const match = /^\/([a-z]+)(?:\s+(.*))?$/s.exec(trimmed);
  if (!match) return null;
  const [, name = '', rest] = match;
  const arg = rest?.trim() || undefined;
  switch (name) {
    case 'continue':
      return { name: 'continue' };
    case 'resume':
      return { name: 'resume', target: arg };
    case 'plan':
      return { name: 'plan' };
    case 'help':
    case 'h':
      return { name: 'help' };
    case 'clear':
    case 'new':
      return { name: 'clear' };
    case 'model':
      return { name: 'model', model: arg };
    case 'quit':
    case 'exit':
    case 'q':
      return { name: 'quit' };
    default:
      return { name: 'unknown', text: trimmed };
  }
}
