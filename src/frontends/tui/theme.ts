/**
 * Colours of the terminal UI. With NO_COLOR (a fact main passes in) every
 * colour is undefined, so Ink emits no colour codes; dim and bold stay, they are
 * not colours.
 */
export interface Theme {
  user: string | undefined;
  accent: string | undefined;
  info: string | undefined;
  warning: string | undefined;
  error: string | undefined;
  success: string | undefined;
  muted: string | undefined;
}

export function themeFor(noColor: boolean): Theme {
  if (noColor) return { user: undefined, accent: undefined, info: undefined, warning: undefined, error: undefined, success: undefined, muted: undefined };
  return { user: 'cyan', accent: 'magenta', info: 'blue', warning: 'yellow', error: 'red', success: 'green', muted: 'gray' };
}
