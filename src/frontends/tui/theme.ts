/**
 * How the terminal UI styles its text. With NO_COLOR (a fact main passes in) it
 * styles nothing: no colour and no attribute (bold, dim, italic, inverse), so
 * Ink prints no SGR escape at all; every item keeps its text marks (›, ✔, ✖, ·,
 * INFO), which say the same without style.
 */
export interface Theme {
  user: string | undefined;
  accent: string | undefined;
  info: string | undefined;
  warning: string | undefined;
  error: string | undefined;
  success: string | undefined;
  muted: string | undefined;
  /** Whether text attributes (bold, dim, italic, the inverse cursor cell) are used. */
  styled: boolean;
}

export function themeFor(noColor: boolean): Theme {
  if (noColor)
    return { user: undefined, accent: undefined, info: undefined, warning: undefined, error: undefined, success: undefined, muted: undefined, styled: false };
  return { user: 'cyan', accent: 'magenta', info: 'blue', warning: 'yellow', error: 'red', success: 'green', muted: 'gray', styled: true };
}
